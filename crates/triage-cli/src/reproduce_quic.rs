//! `triage reproduce quic`: QUIC mode against a real QUIC stack. The CATS page over one link in
//! every sending mode, with the reference's medians (quinn 0.11.12 and Linux TCP through a
//! userspace link emulator) beside ours.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use triage_sim::experiments::reference_runs;

use indicatif::ProgressBar;
use plotters::prelude::*;
use serde::ser::{Serialize, SerializeMap, Serializer};
use triage_sim::experiments::quic::{self, GroupOutcome, QuicRun, QuicSetting, QuicSettingError, MODES};
use triage_sim::units::{Duration, Rate};

use crate::chart::{self, ChartResult, PALETTE};

/// Arguments of `triage reproduce quic`.
#[derive(clap::Args)]
#[command(after_long_help = MODES_HELP)]
pub struct QuicArgs {
    /// Link rate, both directions.
    #[arg(long, default_value = "2Mbps", conflicts_with = "setting")]
    rate: Rate,
    /// One-way delay of the link, both directions (the RTT is twice this).
    #[arg(long, default_value = "25ms", conflicts_with = "setting")]
    owd: Duration,
    /// A rate/one-way-delay pair such as `5Mbps/50ms`, instead of --rate and --owd; repeat it to run
    /// several settings.
    #[arg(long, value_name = "RATE/OWD", value_parser = parse_setting)]
    setting: Vec<(Rate, Duration)>,
    /// Congestion controller.
    #[arg(long, value_enum, default_value = "newreno")]
    cc: Cc,
    /// Random loss per packet and direction: a probability (`0.05`) or a percentage (`5%`), at most 0.5.
    #[arg(long, default_value = "0", value_parser = parse_loss)]
    loss: f64,
    /// Sending modes, comma-separated (default: all): tcp, fifo, rr, prio, rfc9218, cats, dg01, dgall.
    /// `--help` says what each one sends.
    #[arg(long, value_delimiter = ',', value_parser = parse_mode)]
    modes: Vec<String>,
    /// Runs per mode, with seeds S, S+1, ... (the table shows the median and the min-max spread).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// First seed (S) of the loss processes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write runs.csv and one SVG chart per mode into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write one qlog file (JSON-SEQ, qlog 0.3, opens in qvis) per QUIC-mode connection end
    /// into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// JSON lines of the reference's own runs (docs/data/*.jsonl, as its run_matrix.py writes
    /// them); repeat it to pool several files. Adds, for every setting, controller and mode
    /// both ran, each group's and the page's median [p10-p90] beside ours (JSON:
    /// "reference_runs").
    #[arg(long = "reference-runs", value_name = "FILE")]
    reference_runs: Vec<PathBuf>,
    /// Instead of runs with seeds S, S+1, ...: one run per reference run (of --reference-runs,
    /// with the settings, loss, controller and modes asked for) that meets exactly the losses
    /// that run met, drawn as the reference's link emulator drew them from its seed; then each
    /// pair's pages side by side (JSON: "paired").
    #[arg(long, requires = "reference_runs", conflicts_with_all = ["runs", "seed"])]
    paired: bool,
}

/// What each sending mode is, for `--help`.
const MODES_HELP: &str = "\
Sending modes (the server writes P4 150 KiB, P3 60 KiB, P2 40 KiB, P1 25 KiB, P0 8 KiB in that order):
  tcp      TCP mode over the same link (MSS 1448, IW 10, delayed ACKs); the reference is Linux TCP
  fifo     QUIC, one stream per group, streams drained in the order written
  rr       QUIC, round robin between the streams, one packet's worth at a time (quinn's default)
  prio     QUIC, strict priority between the streams, P0 first
  rfc9218  QUIC, RFC 9218 extensible priorities between the streams (no reference)
  cats     QUIC, the CATS Conductor between the streams (no reference)
  dg01     QUIC, P1 and P0 as DATAGRAM frames (RFC 9221), P4..P2 on round-robin streams
  dgall    QUIC, every group as DATAGRAM frames (lost chunks are not resent)

Reference medians (3 runs each) exist for 2Mbps/25ms, 5Mbps/50ms and 10Mbps/10ms, loss 0 and 0.05,
newreno, cubic and bbr, modes tcp, fifo, rr, prio, dg01 and dgall.";

#[derive(Clone, Copy, clap::ValueEnum)]
enum Cc {
    Newreno,
    Cubic,
    Bbr,
}

impl Cc {
    fn name(self) -> &'static str {
        match self {
            Cc::Newreno => "newreno",
            Cc::Cubic => "cubic",
            Cc::Bbr => "bbr",
        }
    }
}

/// `RATE/OWD`, e.g. `2Mbps/25ms`.
fn parse_setting(s: &str) -> Result<(Rate, Duration), String> {
    triage_sim::units::parse_rate_delay(s)
}

/// A probability in [0, 0.5], written `0.05` or `5%`.
fn parse_loss(s: &str) -> Result<f64, String> {
    triage_sim::units::parse_probability(s, 0.5)
}

/// One of [`MODES`].
fn parse_mode(s: &str) -> Result<String, String> {
    let m = s.trim();
    if MODES.contains(&m) {
        Ok(m.to_string())
    } else {
        Err(format!("unknown mode {m:?}: expected one of {}", MODES.join(", ")))
    }
}

/// Group names in the order the server writes them (and the tables show them).
const GROUPS: [&str; 5] = ["P4", "P3", "P2", "P1", "P0"];

/// Runs every reference setting has (results.md, last column).
const REFERENCE_RUNS: u32 = 3;

/// One row of the reference: medians of [`REFERENCE_RUNS`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RefRow {
    /// Link rate in Mbps.
    rate_mbps: u64,
    /// One-way delay in ms.
    owd_ms: u64,
    /// Loss in percent.
    loss_pct: u64,
    /// Congestion controller.
    cc: &'static str,
    /// Sending mode (`tcp` is Linux TCP).
    mode: &'static str,
    /// Median completion per group, P4..P0, in ms.
    completed_ms: [u32; 5],
    /// Datagram groups: (chunks lost, chunks sent) over all runs; `None` for a stream group.
    dgram: [Option<(u32, u32)>; 5],
    /// Largest max-min over the runs of any group, in ms.
    spread_ms: u32,
}

/// One row of [`REFERENCE`], positional so that the table reads like results.md.
#[allow(clippy::too_many_arguments)]
const fn row(
    rate_mbps: u64,
    owd_ms: u64,
    loss_pct: u64,
    cc: &'static str,
    mode: &'static str,
    completed_ms: [u32; 5],
    dgram: [Option<(u32, u32)>; 5],
    spread_ms: u32,
) -> RefRow {
    RefRow { rate_mbps, owd_ms, loss_pct, cc, mode, completed_ms, dgram, spread_ms }
}

/// The reference's medians, transcribed from `reference/quic/results/results.md` in the shared
/// reference data (quinn 0.11.12 / quinn-proto 0.11.19 for the QUIC modes and Linux TCP for `tcp`,
/// through the same userspace link emulator, 3 runs each). Embedded so that a clone without the
/// reference data still prints it; a unit test checks it against the file when the file is there.
#[rustfmt::skip]
const REFERENCE: [RefRow; 108] = [
    row(2, 25, 0, "newreno", "tcp", [744, 996, 1164, 1272, 1303], [None, None, None, None, None], 0),
    row(2, 25, 0, "newreno", "rr", [1333, 947, 775, 604, 302], [None, None, None, None, None], 0),
    row(2, 25, 0, "newreno", "fifo", [770, 1024, 1196, 1302, 1333], [None, None, None, None, None], 1),
    row(2, 25, 0, "newreno", "prio", [1333, 693, 438, 266, 157], [None, None, None, None, None], 1),
    row(2, 25, 0, "newreno", "dg01", [1330, 955, 771, 233, 268], [None, None, None, Some((0, 57)), Some((0, 18))], 0),
    row(2, 25, 0, "newreno", "dgall", [764, 1022, 1194, 1301, 1336], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(2, 25, 0, "cubic", "tcp", [744, 996, 1164, 1272, 1303], [None, None, None, None, None], 0),
    row(2, 25, 0, "cubic", "rr", [1332, 947, 775, 604, 302], [None, None, None, None, None], 1),
    row(2, 25, 0, "cubic", "fifo", [770, 1024, 1196, 1302, 1332], [None, None, None, None, None], 1),
    row(2, 25, 0, "cubic", "prio", [1333, 693, 438, 266, 157], [None, None, None, None, None], 1),
    row(2, 25, 0, "cubic", "dg01", [1330, 955, 772, 233, 268], [None, None, None, Some((0, 57)), Some((0, 18))], 1),
    row(2, 25, 0, "cubic", "dgall", [765, 1022, 1194, 1302, 1336], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(2, 25, 0, "bbr", "tcp", [744, 996, 1164, 1272, 1303], [None, None, None, None, None], 1),
    row(2, 25, 0, "bbr", "rr", [1529, 1144, 972, 800, 498], [None, None, None, None, None], 28),
    row(2, 25, 0, "bbr", "fifo", [966, 1220, 1392, 1498, 1529], [None, None, None, None, None], 0),
    row(2, 25, 0, "bbr", "prio", [1440, 800, 545, 311, 156], [None, None, None, None, None], 0),
    row(2, 25, 0, "bbr", "dg01", [1512, 1131, 971, 355, 456], [None, None, None, Some((0, 57)), Some((0, 18))], 120),
    row(2, 25, 0, "bbr", "dgall", [947, 1205, 1377, 1485, 1519], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 0),
    row(2, 25, 5, "newreno", "tcp", [892, 1307, 1726, 1916, 1967], [None, None, None, None, None], 1164),
    row(2, 25, 5, "newreno", "rr", [2386, 1484, 969, 651, 308], [None, None, None, None, None], 680),
    row(2, 25, 5, "newreno", "fifo", [2247, 2247, 1920, 2133, 2303], [None, None, None, None, None], 2541),
    row(2, 25, 5, "newreno", "prio", [1950, 813, 734, 312, 157], [None, None, None, None, None], 2265),
    row(2, 25, 5, "newreno", "dg01", [2684, 1812, 1150, 233, 268], [None, None, None, Some((3, 57)), Some((2, 18))], 771),
    row(2, 25, 5, "newreno", "dgall", [1506, 2578, 3044, 3290, 3442], [Some((17, 330)), Some((10, 132)), Some((4, 90)), Some((7, 57)), Some((0, 18))], 2335),
    row(2, 25, 5, "cubic", "tcp", [834, 1076, 1294, 1363, 1363], [None, None, None, None, None], 447),
    row(2, 25, 5, "cubic", "rr", [2752, 2002, 1836, 1617, 1493], [None, None, None, None, None], 1829),
    row(2, 25, 5, "cubic", "fifo", [1797, 2043, 1935, 2111, 2162], [None, None, None, None, None], 1795),
    row(2, 25, 5, "cubic", "prio", [1550, 734, 621, 339, 157], [None, None, None, None, None], 1539),
    row(2, 25, 5, "cubic", "dg01", [2601, 1826, 1259, 233, 269], [None, None, None, Some((5, 57)), Some((2, 18))], 1098),
    row(2, 25, 5, "cubic", "dgall", [766, 1023, 1195, 1303, 1337], [Some((8, 330)), Some((3, 132)), Some((4, 90)), Some((1, 57)), Some((1, 18))], 16),
    row(2, 25, 5, "bbr", "tcp", [829, 1071, 1239, 1359, 1384], [None, None, None, None, None], 68),
    row(2, 25, 5, "bbr", "rr", [1615, 1233, 1010, 856, 554], [None, None, None, None, None], 1318),
    row(2, 25, 5, "bbr", "fifo", [1572, 1553, 1566, 1585, 1585], [None, None, None, None, None], 548),
    row(2, 25, 5, "bbr", "prio", [1496, 872, 569, 311, 157], [None, None, None, None, None], 266),
    row(2, 25, 5, "bbr", "dg01", [1667, 1259, 1166, 377, 453], [None, None, None, Some((1, 57)), Some((3, 18))], 324),
    row(2, 25, 5, "bbr", "dgall", [970, 1228, 1400, 1507, 1542], [Some((14, 330)), Some((9, 132)), Some((1, 90)), Some((3, 57)), Some((0, 18))], 67),
    row(5, 50, 0, "newreno", "tcp", [602, 702, 770, 813, 825], [None, None, None, None, None], 11),
    row(5, 50, 0, "newreno", "rr", [850, 696, 628, 559, 423], [None, None, None, None, None], 1),
    row(5, 50, 0, "newreno", "fifo", [625, 727, 795, 838, 850], [None, None, None, None, None], 6),
    row(5, 50, 0, "newreno", "prio", [851, 595, 478, 349, 225], [None, None, None, None, None], 2),
    row(5, 50, 0, "newreno", "dg01", [851, 701, 627, 336, 350], [None, None, None, Some((0, 57)), Some((0, 18))], 6),
    row(5, 50, 0, "newreno", "dgall", [626, 729, 797, 840, 854], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(5, 50, 0, "cubic", "tcp", [602, 703, 770, 813, 825], [None, None, None, None, None], 1),
    row(5, 50, 0, "cubic", "rr", [851, 697, 628, 560, 424], [None, None, None, None, None], 1),
    row(5, 50, 0, "cubic", "fifo", [625, 727, 796, 839, 850], [None, None, None, None, None], 2),
    row(5, 50, 0, "cubic", "prio", [850, 594, 478, 348, 224], [None, None, None, None, None], 2),
    row(5, 50, 0, "cubic", "dg01", [851, 701, 627, 336, 350], [None, None, None, Some((0, 57)), Some((0, 18))], 2),
    row(5, 50, 0, "cubic", "dgall", [626, 729, 798, 841, 854], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 5),
    row(5, 50, 0, "bbr", "tcp", [613, 713, 781, 824, 836], [None, None, None, None, None], 2),
    row(5, 50, 0, "bbr", "rr", [906, 752, 683, 608, 430], [None, None, None, None, None], 108),
    row(5, 50, 0, "bbr", "fifo", [733, 835, 903, 946, 958], [None, None, None, None, None], 6),
    row(5, 50, 0, "bbr", "prio", [958, 702, 556, 348, 224], [None, None, None, None, None], 6),
    row(5, 50, 0, "bbr", "dg01", [954, 804, 731, 337, 351], [None, None, None, Some((0, 57)), Some((0, 18))], 12),
    row(5, 50, 0, "bbr", "dgall", [720, 823, 891, 934, 948], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 50),
    row(5, 50, 5, "newreno", "tcp", [1005, 1583, 2328, 2663, 2763], [None, None, None, None, None], 2836),
    row(5, 50, 5, "newreno", "rr", [3438, 2360, 1473, 844, 424], [None, None, None, None, None], 2076),
    row(5, 50, 5, "newreno", "fifo", [1401, 3100, 3941, 3731, 3937], [None, None, None, None, None], 3971),
    row(5, 50, 5, "newreno", "prio", [4018, 1522, 767, 539, 224], [None, None, None, None, None], 1657),
    row(5, 50, 5, "newreno", "dg01", [5317, 3382, 2541, 428, 532], [None, None, None, Some((6, 57)), Some((0, 18))], 1675),
    row(5, 50, 5, "newreno", "dgall", [1450, 3279, 4011, 4358, 4571], [Some((17, 330)), Some((9, 132)), Some((6, 90)), Some((4, 57)), Some((1, 18))], 3637),
    row(5, 50, 5, "cubic", "tcp", [863, 1039, 1314, 1364, 1415], [None, None, None, None, None], 1724),
    row(5, 50, 5, "cubic", "rr", [3799, 2490, 1413, 977, 533], [None, None, None, None, None], 925),
    row(5, 50, 5, "cubic", "fifo", [2364, 2364, 2228, 3107, 3111], [None, None, None, None, None], 1513),
    row(5, 50, 5, "cubic", "prio", [3351, 1437, 751, 456, 224], [None, None, None, None, None], 3341),
    row(5, 50, 5, "cubic", "dg01", [3166, 2249, 1287, 336, 350], [None, None, None, Some((3, 57)), Some((2, 18))], 2321),
    row(5, 50, 5, "cubic", "dgall", [774, 961, 1100, 1208, 1286], [Some((8, 330)), Some((3, 132)), Some((3, 90)), Some((2, 57)), Some((1, 18))], 1497),
    row(5, 50, 5, "bbr", "tcp", [882, 1119, 1119, 1119, 1191], [None, None, None, None, None], 1357),
    row(5, 50, 5, "bbr", "rr", [1093, 990, 785, 680, 430], [None, None, None, None, None], 181),
    row(5, 50, 5, "bbr", "fifo", [1978, 1985, 2023, 2057, 1973], [None, None, None, None, None], 1155),
    row(5, 50, 5, "bbr", "prio", [1027, 858, 573, 454, 224], [None, None, None, None, None], 421),
    row(5, 50, 5, "bbr", "dg01", [1117, 877, 797, 336, 351], [None, None, None, Some((3, 57)), Some((3, 18))], 48),
    row(5, 50, 5, "bbr", "dgall", [777, 880, 948, 991, 1005], [Some((15, 330)), Some((8, 132)), Some((1, 90)), Some((4, 57)), Some((0, 18))], 91),
    row(10, 10, 0, "newreno", "tcp", [179, 230, 263, 285, 291], [None, None, None, None, None], 1),
    row(10, 10, 0, "newreno", "rr", [298, 221, 187, 153, 92], [None, None, None, None, None], 0),
    row(10, 10, 0, "newreno", "fifo", [186, 236, 271, 292, 298], [None, None, None, None, None], 1),
    row(10, 10, 0, "newreno", "prio", [299, 171, 120, 85, 53], [None, None, None, None, None], 3),
    row(10, 10, 0, "newreno", "dg01", [299, 224, 187, 79, 86], [None, None, None, Some((0, 57)), Some((0, 18))], 0),
    row(10, 10, 0, "newreno", "dgall", [186, 237, 271, 293, 300], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(10, 10, 0, "cubic", "tcp", [179, 230, 263, 285, 291], [None, None, None, None, None], 1),
    row(10, 10, 0, "cubic", "rr", [298, 221, 187, 152, 92], [None, None, None, None, None], 1),
    row(10, 10, 0, "cubic", "fifo", [186, 237, 271, 292, 298], [None, None, None, None, None], 0),
    row(10, 10, 0, "cubic", "prio", [298, 170, 120, 85, 53], [None, None, None, None, None], 0),
    row(10, 10, 0, "cubic", "dg01", [299, 224, 187, 79, 86], [None, None, None, Some((0, 57)), Some((0, 18))], 0),
    row(10, 10, 0, "cubic", "dgall", [186, 237, 272, 293, 300], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(10, 10, 0, "bbr", "tcp", [179, 230, 263, 285, 291], [None, None, None, None, None], 1),
    row(10, 10, 0, "bbr", "rr", [447, 370, 335, 301, 143], [None, None, None, None, None], 89),
    row(10, 10, 0, "bbr", "fifo", [334, 385, 419, 440, 447], [None, None, None, None, None], 26),
    row(10, 10, 0, "bbr", "prio", [446, 318, 233, 121, 53], [None, None, None, None, None], 77),
    row(10, 10, 0, "bbr", "dg01", [447, 372, 335, 99, 122], [None, None, None, Some((0, 57)), Some((0, 18))], 0),
    row(10, 10, 0, "bbr", "dgall", [333, 385, 419, 441, 448], [Some((0, 330)), Some((0, 132)), Some((0, 90)), Some((0, 57)), Some((0, 18))], 1),
    row(10, 10, 5, "newreno", "tcp", [237, 397, 558, 631, 651], [None, None, None, None, None], 681),
    row(10, 10, 5, "newreno", "rr", [663, 456, 354, 196, 97], [None, None, None, None, None], 206),
    row(10, 10, 5, "newreno", "fifo", [734, 924, 1143, 1276, 1305], [None, None, None, None, None], 1384),
    row(10, 10, 5, "newreno", "prio", [1038, 319, 167, 110, 96], [None, None, None, None, None], 1488),
    row(10, 10, 5, "newreno", "dg01", [1503, 1033, 658, 101, 164], [None, None, None, Some((3, 57)), Some((0, 18))], 980),
    row(10, 10, 5, "newreno", "dgall", [332, 642, 800, 864, 889], [Some((17, 330)), Some((11, 132)), Some((4, 90)), Some((5, 57)), Some((2, 18))], 983),
    row(10, 10, 5, "cubic", "tcp", [206, 244, 299, 319, 332], [None, None, None, None, None], 83),
    row(10, 10, 5, "cubic", "rr", [1529, 1246, 1243, 1153, 1093], [None, None, None, None, None], 1363),
    row(10, 10, 5, "cubic", "fifo", [1055, 720, 916, 1101, 1077], [None, None, None, None, None], 1268),
    row(10, 10, 5, "cubic", "prio", [883, 231, 180, 106, 53], [None, None, None, None, None], 1558),
    row(10, 10, 5, "cubic", "dg01", [689, 417, 301, 79, 86], [None, None, None, Some((3, 57)), Some((1, 18))], 388),
    row(10, 10, 5, "cubic", "dgall", [189, 241, 275, 297, 304], [Some((6, 330)), Some((3, 132)), Some((4, 90)), Some((3, 57)), Some((0, 18))], 102),
    row(10, 10, 5, "bbr", "tcp", [257, 279, 312, 315, 315], [None, None, None, None, None], 28),
    row(10, 10, 5, "bbr", "rr", [470, 384, 353, 317, 147], [None, None, None, None, None], 104),
    row(10, 10, 5, "bbr", "fifo", [510, 491, 469, 483, 483], [None, None, None, None, None], 1069),
    row(10, 10, 5, "bbr", "prio", [467, 349, 235, 123, 53], [None, None, None, None, None], 49),
    row(10, 10, 5, "bbr", "dg01", [482, 408, 365, 99, 122], [None, None, None, Some((0, 57)), Some((1, 18))], 44),
    row(10, 10, 5, "bbr", "dgall", [350, 401, 436, 457, 464], [Some((14, 330)), Some((8, 132)), Some((4, 90)), Some((2, 57)), Some((0, 18))], 100),
];

/// The reference row of a run's setting and mode, if the reference has one.
fn reference(s: &QuicSetting) -> Option<&'static RefRow> {
    REFERENCE.iter().find(|r| {
        r.rate_mbps * 1_000_000 == s.rate_bps
            && r.owd_ms as f64 == s.owd_ms
            && (r.loss_pct as f64 / 100.0 - s.loss).abs() < 1e-9
            && r.cc == s.cc
            && r.mode == s.mode
    })
}

/// Runs the reproduction.
pub fn run(a: QuicArgs) -> Result<(), String> {
    let settings = if a.setting.is_empty() { vec![(a.rate, a.owd)] } else { a.setting.clone() };
    let mut modes: Vec<String> = Vec::new();
    for m in &a.modes {
        if modes.contains(m) {
            return Err(format!("--modes: mode {m:?} given twice"));
        }
        modes.push(m.clone());
    }
    if modes.is_empty() {
        modes = MODES.iter().map(|m| m.to_string()).collect();
    }
    a.seed
        .checked_add(u64::from(a.runs) - 1)
        .ok_or_else(|| format!("--seed {} + --runs {} overflows", a.seed, a.runs))?;
    // Read before the runs, so that a bad file fails at once.
    let refs = if a.reference_runs.is_empty() { None } else { Some(reference_runs::load(&a.reference_runs)?) };
    // Every setting is checked before the first run, so a bad value fails at once.
    let mut plan = Vec::new();
    // Runs per setting and mode, in the plan's order (settings, then modes).
    let mut counts: Vec<usize> = Vec::new();
    // One run of a cell (setting, mode) with its seed.
    let cell = |rate: Rate, owd: Duration, mode: &str, seed: u64| QuicSetting {
        mode: mode.to_string(),
        cc: a.cc.name().to_string(),
        rate_bps: rate.0,
        owd_ms: owd.0 as f64 / 1e6,
        loss: a.loss,
        seed,
        replay_seed: None,
    };
    if a.paired {
        let refs = refs.as_ref().expect("clap: --paired requires --reference-runs");
        for &(rate, owd) in &settings {
            for mode in &modes {
                let cell = cell(rate, owd, mode, 0);
                let seeds = refs.seeds_of(&cell);
                if seeds.is_empty() {
                    return Err(format!(
                        "--paired: no run of {} has a seed and {} / {}, loss {}, {}, mode {mode}",
                        refs.files.join(", "),
                        rate_label(rate),
                        owd_label(owd),
                        a.loss,
                        a.cc.name()
                    ));
                }
                counts.push(seeds.len());
                for seed in seeds {
                    let s = QuicSetting { seed, replay_seed: Some(seed), ..cell.clone() };
                    quic::build(&s).map_err(|e| format!("{}: {e}", flag(&e)))?;
                    plan.push(s);
                }
            }
        }
    }
    for &(rate, owd) in settings.iter().filter(|_| !a.paired) {
        for mode in &modes {
            for i in 0..u64::from(a.runs) {
                let s = cell(rate, owd, mode, a.seed + i);
                quic::build(&s).map_err(|e| {
                    let f = flag(&e);
                    let f = if !a.setting.is_empty() && (f == "--rate" || f == "--owd") { "--setting" } else { f };
                    format!("{f}: {e}")
                })?;
                plan.push(s);
            }
            counts.push(a.runs as usize);
        }
    }
    if let Some(dir) = &a.qlog {
        std::fs::create_dir_all(dir).map_err(|e| format!("--qlog {}: {e}", dir.display()))?;
    }
    let bar = progress(plan.len() as u64);
    let mut runs = Vec::with_capacity(plan.len());
    for s in &plan {
        bar.set_message(format!("{} {}/{}", s.mode, Rate(s.rate_bps), Duration((s.owd_ms * 1e6).round() as u64)));
        runs.push(quic::run_with_qlog(s, a.qlog.as_deref()).map_err(|e| e.to_string())?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut cells = Vec::with_capacity(counts.len());
    let mut start = 0;
    for n in counts {
        cells.push(start..start + n);
        start += n;
    }
    let n = if a.paired { cells.iter().map(|c| c.len()).max().unwrap_or(0) as u32 } else { a.runs };
    let r = Reproduction { runs, settings, modes, n, paired: a.paired, cells };
    let cmp = refs.as_ref().map(|x| reference_runs::compare(&r.runs, x));
    if let Some(dir) = &a.out {
        write_out(dir, &r, cmp.as_deref()).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let pairs = refs.as_ref().filter(|_| a.paired).map(|x| reference_runs::paired(&r.runs, x));
    if a.json {
        let mut out = json(&r);
        if let (Some(c), Some(x)) = (&cmp, &refs) {
            out.reference_runs = Some(JsonRefRuns { files: &x.files, skipped_runs: x.skipped, cells: c });
        }
        out.paired = pairs.as_deref();
        outln!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    } else {
        out!("{}", table(&r));
        if let (Some(c), Some(x)) = (&cmp, &refs) {
            out!("{}", reference_runs::table(c, x));
        }
        if let Some(p) = &pairs {
            out!("{}", reference_runs::paired_table(p));
        }
    }
    Ok(())
}

/// The option a setting's error comes from, so that the message names it.
fn flag(e: &QuicSettingError) -> &'static str {
    match e {
        QuicSettingError::Mode(_) => "--modes",
        QuicSettingError::Cc(_) => "--cc",
        QuicSettingError::Rate(_) => "--rate",
        QuicSettingError::Loss(_) => "--loss",
        QuicSettingError::Delay(_) => "--owd",
        QuicSettingError::Io(_) => "--qlog",
    }
}

/// A count of runs, drawn only on a terminal and only when there are more than 10 runs.
fn progress(total: u64) -> ProgressBar {
    crate::counting_bar(total, 10, "run", "{msg}")
}

/// Every run, in the order settings x modes x seeds.
struct Reproduction {
    runs: Vec<QuicRun>,
    settings: Vec<(Rate, Duration)>,
    modes: Vec<String>,
    /// Runs per setting and mode (with `--paired`, the most any has).
    n: u32,
    /// One run per reference run, replaying its losses (`--paired`).
    paired: bool,
    /// Each setting's and mode's runs in `runs` (settings, then modes).
    cells: Vec<std::ops::Range<usize>>,
}

impl Reproduction {
    /// The runs of one setting (index into `settings`) and mode.
    fn cell(&self, setting: usize, mode: usize) -> &[QuicRun] {
        &self.runs[self.cells[setting * self.modes.len() + mode].clone()]
    }
}

/// One group over the runs of a setting and mode.
#[derive(Debug, PartialEq)]
struct GroupSummary {
    /// Median completion over the runs where the group completed, ms.
    median_ms: Option<f64>,
    /// Smallest and largest completion, ms.
    min_ms: Option<f64>,
    max_ms: Option<f64>,
    /// Datagram chunks sent and lost, summed over the runs.
    chunks: u32,
    lost: u32,
    datagram: bool,
}

/// The median of `v` (the mean of the two middle values when there is an even number).
fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 })
}

fn summarize(runs: &[QuicRun], group: usize) -> GroupSummary {
    let outs: Vec<&GroupOutcome> = runs.iter().filter_map(|r| r.groups.get(group).map(|g| &g.1)).collect();
    let done: Vec<f64> = outs.iter().filter_map(|g| g.completed_ms).collect();
    GroupSummary {
        median_ms: median(&done),
        min_ms: done.iter().copied().reduce(f64::min),
        max_ms: done.iter().copied().reduce(f64::max),
        chunks: outs.iter().map(|g| g.chunks).sum(),
        lost: outs.iter().map(|g| g.lost).sum(),
        datagram: outs.iter().any(|g| g.datagram),
    }
}

/// `(ours - reference) / reference` in percent.
fn diff_pct(ours: f64, reference: f64) -> f64 {
    (ours - reference) / reference * 100.0
}

fn rate_label(r: Rate) -> String {
    format!("{} Mbps", r.0 as f64 / 1e6)
}

fn owd_label(d: Duration) -> String {
    format!("{} ms", d.0 as f64 / 1e6)
}

/// Width of a group's column in the table.
const COL: usize = 17;

/// One table per setting: per mode a row of ours (median), the min-max spread when there are
/// several runs, the reference's median and the difference in percent.
fn table(r: &Reproduction) -> String {
    let mut s = String::new();
    let first = &r.runs[0].setting;
    let seeds = if r.paired {
        "the reference runs' emulator seeds, their losses replayed".to_string()
    } else if r.n == 1 {
        format!("seed {}", first.seed)
    } else {
        format!("seeds {}..{}", first.seed, first.seed + u64::from(r.n) - 1)
    };
    for (si, &(rate, owd)) in r.settings.iter().enumerate() {
        let _ = writeln!(
            s,
            "QUIC reproduction: {} / {} one-way, {}, loss {}%, {}{} run{} per mode ({seeds})",
            rate_label(rate),
            owd_label(owd),
            first.cc,
            first.loss * 100.0,
            if r.paired { "up to " } else { "" },
            r.n,
            if r.n == 1 { "" } else { "s" },
        );
        let _ = writeln!(s, "completion per group (ms); reference: quinn 0.11.12 (QUIC modes) and Linux TCP (tcp), median of {REFERENCE_RUNS} runs");
        let _ = writeln!(s);
        let _ = write!(s, "{:<8} {:<10}", "mode", "");
        for g in GROUPS {
            let _ = write!(s, " {g:>COL$}");
        }
        let _ = writeln!(s);
        for (mi, mode) in r.modes.iter().enumerate() {
            let runs = r.cell(si, mi);
            let sums: Vec<GroupSummary> = (0..GROUPS.len()).map(|g| summarize(runs, g)).collect();
            let rf = reference(&runs[0].setting);
            let _ = write!(s, "{:<8} {:<10}", mode, if r.n == 1 { "triage" } else { "triage med" });
            for g in &sums {
                let _ = write!(s, " {:>COL$}", ours_cell(g));
            }
            let _ = writeln!(s);
            if r.n > 1 {
                let _ = write!(s, "{:<8} {:<10}", "", "min-max");
                for g in &sums {
                    let cell = match (g.min_ms, g.max_ms) {
                        (Some(a), Some(b)) => format!("{a:.0}-{b:.0} ({:.0})", b - a),
                        _ => "-".into(),
                    };
                    let _ = write!(s, " {cell:>COL$}");
                }
                let _ = writeln!(s);
            }
            let Some(rf) = rf else {
                let _ = writeln!(s, "{:<8} {:<10} (no reference at this setting)", "", "");
                continue;
            };
            let _ = write!(s, "{:<8} {:<10}", "", if mode == "tcp" { "Linux" } else { "quinn" });
            for (i, &ms) in rf.completed_ms.iter().enumerate() {
                let cell = match rf.dgram[i] {
                    Some((l, c)) => format!("{ms}ᵈ {l}/{c}"),
                    None => ms.to_string(),
                };
                let _ = write!(s, " {cell:>COL$}");
            }
            let _ = writeln!(s);
            let _ = write!(s, "{:<8} {:<10}", "", "diff");
            for (i, &ms) in rf.completed_ms.iter().enumerate() {
                let cell = sums[i].median_ms.map_or("-".into(), |o| format!("{:+.1}%", diff_pct(o, f64::from(ms))));
                let _ = write!(s, " {cell:>COL$}");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "ᵈ = sent as DATAGRAM frames: when the last chunk that arrived came in, then chunks lost/sent (summed over the\n\
         runs; the reference's over its {REFERENCE_RUNS} runs)."
    );
    if r.n > 1 {
        let _ = writeln!(s, "min-max: smallest and largest completion over the runs (width).");
    }
    s
}

/// Our median of a group, with `ᵈ lost/sent` for a datagram group.
fn ours_cell(g: &GroupSummary) -> String {
    let t = g.median_ms.map_or("-".into(), |m| format!("{m:.1}"));
    if g.datagram {
        format!("{t}ᵈ {}/{}", g.lost, g.chunks)
    } else {
        t
    }
}

/// Groups as a JSON object keyed by name, in the order P4..P0.
struct Groups<'a>(&'a [(String, GroupOutcome)]);

impl Serialize for Groups<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (name, g) in self.0 {
            m.serialize_entry(
                name,
                &serde_json::json!({"completed_ms": g.completed_ms, "chunks": g.chunks, "lost": g.lost}),
            )?;
        }
        m.end()
    }
}

/// The reference's groups in the same shape: completion (median), chunks and lost over its runs.
struct RefGroups(&'static RefRow);

impl Serialize for RefGroups {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(GROUPS.len()))?;
        for (i, name) in GROUPS.iter().enumerate() {
            let (lost, chunks) = self.0.dgram[i].unwrap_or((0, 0));
            m.serialize_entry(
                name,
                &serde_json::json!({"completed_ms": self.0.completed_ms[i], "chunks": chunks, "lost": lost}),
            )?;
        }
        m.end()
    }
}

#[derive(serde::Serialize)]
struct JsonRun<'a> {
    mode: &'a str,
    cc: &'a str,
    rate_bps: u64,
    owd_ms: f64,
    loss: f64,
    seed: u64,
    groups: Groups<'a>,
}

#[derive(serde::Serialize)]
struct JsonRef {
    mode: &'static str,
    stack: &'static str,
    cc: &'static str,
    rate_bps: u64,
    owd_ms: f64,
    loss: f64,
    runs: u32,
    spread_ms: u32,
    groups: RefGroups,
}

#[derive(serde::Serialize)]
struct JsonOut<'a> {
    runs: Vec<JsonRun<'a>>,
    reference: Vec<JsonRef>,
    /// With `--reference-runs`: the files, the runs in them without a result, and the
    /// comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_runs: Option<JsonRefRuns<'a>>,
    /// With `--paired`: our runs and the reference runs whose losses they met, pair by pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    paired: Option<&'a [reference_runs::PairedComparison]>,
}

#[derive(serde::Serialize)]
struct JsonRefRuns<'a> {
    files: &'a [String],
    skipped_runs: usize,
    cells: &'a [reference_runs::Comparison],
}

/// `{"runs":[{"mode","cc","rate_bps","owd_ms","loss","seed","groups":{"P4":{"completed_ms","chunks","lost"},...}}],
/// "reference":[...]}`: every run, and the reference rows of the settings and modes that were run.
fn json(r: &Reproduction) -> JsonOut<'_> {
    let runs = r
        .runs
        .iter()
        .map(|x| JsonRun {
            mode: &x.setting.mode,
            cc: &x.setting.cc,
            rate_bps: x.setting.rate_bps,
            owd_ms: x.setting.owd_ms,
            loss: x.setting.loss,
            seed: x.setting.seed,
            groups: Groups(&x.groups),
        })
        .collect();
    let mut reference = Vec::new();
    for si in 0..r.settings.len() {
        for mi in 0..r.modes.len() {
            if let Some(rf) = reference_of(r.cell(si, mi)) {
                reference.push(JsonRef {
                    mode: rf.mode,
                    stack: if rf.mode == "tcp" { "Linux TCP" } else { "quinn 0.11.12" },
                    cc: rf.cc,
                    rate_bps: rf.rate_mbps * 1_000_000,
                    owd_ms: rf.owd_ms as f64,
                    loss: rf.loss_pct as f64 / 100.0,
                    runs: REFERENCE_RUNS,
                    spread_ms: rf.spread_ms,
                    groups: RefGroups(rf),
                });
            }
        }
    }
    JsonOut { runs, reference, reference_runs: None, paired: None }
}

fn reference_of(runs: &[QuicRun]) -> Option<&'static RefRow> {
    runs.first().and_then(|x| reference(&x.setting))
}

/// Header of runs.csv: one row per run and group.
const CSV_HEADER: [&str; 11] =
    ["mode", "cc", "rate_bps", "owd_ms", "loss", "seed", "group", "completed_ms", "chunks", "lost", "datagram"];

/// `--out`: runs.csv and a chart per setting and mode; with `--reference-runs`, the charts
/// show those runs' medians (`refs`) instead of the embedded 3-run reference.
fn write_out(dir: &Path, r: &Reproduction, refs: Option<&[reference_runs::Comparison]>) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut csv: Vec<Vec<String>> = Vec::new();
    for x in &r.runs {
        let s = &x.setting;
        for (name, g) in &x.groups {
            csv.push(vec![
                s.mode.clone(),
                s.cc.clone(),
                s.rate_bps.to_string(),
                s.owd_ms.to_string(),
                s.loss.to_string(),
                s.seed.to_string(),
                name.to_string(),
                g.completed_ms.map_or(String::new(), |v| v.to_string()),
                g.chunks.to_string(),
                g.lost.to_string(),
                g.datagram.to_string(),
            ]);
        }
    }
    crate::table::write_csv(
        &dir.join("runs.csv"),
        &crate::table::RunParams::command("reproduce quic"),
        &CSV_HEADER,
        &csv,
    )?;
    for (si, &(rate, owd)) in r.settings.iter().enumerate() {
        for (mi, mode) in r.modes.iter().enumerate() {
            let name = if r.settings.len() == 1 { format!("{mode}.svg") } else { format!("{mode}_{rate}_{owd}.svg") };
            mode_chart(&dir.join(&name), r, si, mi, refs).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    Ok(())
}

/// Grouped bars per group, ours (median) beside the reference's median, and each run as a dot
/// on our bar when there are several.
fn mode_chart(
    path: &Path,
    r: &Reproduction,
    si: usize,
    mi: usize,
    refs: Option<&[reference_runs::Comparison]>,
) -> ChartResult {
    let runs = r.cell(si, mi);
    let s = &runs[0].setting;
    let rf = reference(s);
    let sums: Vec<GroupSummary> = (0..GROUPS.len()).map(|g| summarize(runs, g)).collect();
    let ours: Vec<f64> = sums.iter().map(|g| g.median_ms.unwrap_or(0.0)).collect();
    // The reference runs given, when they have this cell and every group: their medians.
    let given: Option<Vec<(f64, usize)>> = refs.and_then(|cells| cells.iter().find(|c| c.is_for(s))).and_then(|c| {
        GROUPS
            .iter()
            .map(|g| c.groups.iter().find(|x| x.group == *g).and_then(|x| x.reference).map(|x| (x.median_ms, x.runs)))
            .collect()
    });
    let theirs: Option<Vec<f64>> = match &given {
        Some(per) => Some(per.iter().map(|p| p.0).collect()),
        None => rf.map(|x| x.completed_ms.iter().map(|&v| f64::from(v)).collect()),
    };
    let their_runs = given.as_ref().map_or(REFERENCE_RUNS as usize, |per| per[0].1);
    let dots: Vec<(usize, f64)> = if runs.len() > 1 {
        runs.iter()
            .flat_map(|x| x.groups.iter().enumerate().filter_map(|(i, g)| g.1.completed_ms.map(|v| (i, v))))
            .collect()
    } else {
        Vec::new()
    };
    let ymax =
        ours.iter().chain(theirs.iter().flatten()).chain(dots.iter().map(|d| &d.1)).copied().fold(0.0, f64::max) * 1.3;
    let root = chart::canvas(path, (900, 500))?;
    let title = format!(
        "{} over {} / {} one-way, {}, loss {}%: completion per group",
        s.mode,
        rate_label(r.settings[si].0),
        owd_label(r.settings[si].1),
        s.cc,
        s.loss * 100.0
    );
    // Group i is centred on x = i, so the axis's integer ticks fall under the groups.
    let n = GROUPS.len() as f64;
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(65)
        .build_cartesian_2d(-0.5f64..n - 0.5, 0f64..ymax.max(1.0))?;
    let labels: Vec<String> = GROUPS
        .iter()
        .zip(&sums)
        .map(|(g, x)| if x.datagram { format!("{g} (datagrams)") } else { g.to_string() })
        .collect();
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(GROUPS.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("completion (ms)")
        .draw()?;
    let k = if theirs.is_some() { 2.0 } else { 1.0 };
    let bar = |i: usize, j: f64| (i as f64 - 0.4 + 0.8 * j / k, i as f64 - 0.4 + 0.8 * (j + 1.0) / k);
    let ours_label =
        if runs.len() > 1 { format!("triage (median of {} runs)", runs.len()) } else { "triage".to_string() };
    c.draw_series(
        ours.iter()
            .enumerate()
            .map(|(i, v)| Rectangle::new([(bar(i, 0.0).0, 0.0), (bar(i, 0.0).1, *v)], PALETTE[0].filled())),
    )?
    .label(ours_label)
    .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], PALETTE[0].filled()));
    if let Some(t) = &theirs {
        let who = if s.mode == "tcp" { "Linux TCP" } else { "quinn 0.11.12" };
        c.draw_series(
            t.iter()
                .enumerate()
                .map(|(i, v)| Rectangle::new([(bar(i, 1.0).0, 0.0), (bar(i, 1.0).1, *v)], PALETTE[1].filled())),
        )?
        .label(format!("{who} (median of {their_runs} runs)"))
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], PALETTE[1].filled()));
    }
    if !dots.is_empty() {
        c.draw_series(dots.iter().map(|&(i, v)| {
            let (a, b) = bar(i, 0.0);
            Circle::new(((a + b) / 2.0, v), 3, BLACK.filled())
        }))?
        .label("triage, each run")
        .legend(|(x, y)| Circle::new((x + 7, y), 3, BLACK.filled()));
    }
    chart::legend(&mut c, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded table is results.md, row for row: parse the file (a Markdown table whose
    /// datagram cells carry `ᵈ` and whose lost column reads `P1 0/57, P0 0/18`) and compare.
    #[test]
    fn embedded_reference_is_results_md() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/quic/results/results.md");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut parsed = Vec::new();
        for line in text.lines().filter(|l| l.starts_with("| ") && l.contains(" Mbps / ")) {
            let c: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            let (rate, owd) = c[0].split_once(" Mbps / ").unwrap();
            let mut completed_ms = [0u32; 5];
            let mut dgram = [None; 5];
            for i in 0..5 {
                completed_ms[i] = c[4 + i].trim_end_matches('ᵈ').parse().unwrap();
                assert_eq!(c[4 + i].ends_with('ᵈ'), c[9].contains(GROUPS[i]), "{line}");
            }
            for part in c[9].split(", ").filter(|p| !p.is_empty()) {
                let (g, lc) = part.split_once(' ').unwrap();
                let (l, t) = lc.split_once('/').unwrap();
                let i = GROUPS.iter().position(|x| *x == g).unwrap();
                dgram[i] = Some((l.parse().unwrap(), t.parse().unwrap()));
            }
            assert_eq!(c[11], REFERENCE_RUNS.to_string());
            parsed.push(RefRow {
                rate_mbps: rate.parse().unwrap(),
                owd_ms: owd.trim_end_matches(" ms").parse().unwrap(),
                loss_pct: c[1].trim_end_matches('%').parse().unwrap(),
                cc: Box::leak(c[2].to_string().into_boxed_str()),
                mode: Box::leak(c[3].split(' ').next().unwrap().to_string().into_boxed_str()),
                completed_ms,
                dgram,
                spread_ms: c[10].parse().unwrap(),
            });
        }
        assert_eq!(parsed.len(), REFERENCE.len());
        for (p, e) in parsed.iter().zip(REFERENCE.iter()) {
            assert_eq!(p, e);
        }
    }

    #[test]
    fn reference_lookup_matches_setting_exactly() {
        let s = |mode: &str, rate_bps, owd_ms, loss, cc: &str| QuicSetting {
            mode: mode.into(),
            cc: cc.into(),
            rate_bps,
            owd_ms,
            loss,
            seed: 1,
            replay_seed: None,
        };
        // results.md: "| 2 Mbps / 25 ms | 0% | cubic | prio | 1333 | 693 | 438 | 266 | 157 |".
        let r = reference(&s("prio", 2_000_000, 25.0, 0.0, "cubic")).unwrap();
        assert_eq!(r.completed_ms, [1333, 693, 438, 266, 157]);
        // "| 10 Mbps / 10 ms | 5% | newreno | dg01 | ... | P1 3/57, P0 0/18 |".
        let r = reference(&s("dg01", 10_000_000, 10.0, 0.05, "newreno")).unwrap();
        assert_eq!(r.dgram, [None, None, None, Some((3, 57)), Some((0, 18))]);
        assert!(reference(&s("fifo", 2_000_000, 26.0, 0.0, "newreno")).is_none());
        assert!(reference(&s("fifo", 3_000_000, 25.0, 0.0, "newreno")).is_none());
        assert!(reference(&s("fifo", 2_000_000, 25.0, 0.01, "newreno")).is_none());
        assert!(reference(&s("cats", 2_000_000, 25.0, 0.0, "newreno")).is_none());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        // Middle two of 1 2 3 4: (2 + 3) / 2.
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn loss_parses_as_probability_or_percent() {
        assert_eq!(parse_loss("0.05"), Ok(0.05));
        assert_eq!(parse_loss("5%"), Ok(0.05));
        assert_eq!(parse_loss("0"), Ok(0.0));
        for bad in ["0.6", "-0.1", "51%", "abc", "NaN", "inf", ""] {
            assert!(parse_loss(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn settings_and_modes_parse() {
        assert_eq!(parse_setting("5Mbps/50ms"), Ok((Rate(5_000_000), Duration(50_000_000))));
        assert!(parse_setting("5Mbps").is_err());
        assert!(parse_setting("5Mbps/50").is_err());
        assert!(parse_setting("5MBps/50ms").is_err());
        assert_eq!(parse_mode("dg01"), Ok("dg01".to_string()));
        assert!(parse_mode("dg02").unwrap_err().contains("dg02"));
    }
}
