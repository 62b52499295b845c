//! The scenario file as a whole: parse, validate, build the simulation and run it briefly.
//!
//! Where `scenario` mutates raw text (and so mostly exercises the TOML parser), this target
//! writes well-formed scenario files from the input's choices: every topology kind, link
//! option (rates, delays, every queue discipline with its parameters, both loss models,
//! traces in either direction, jitter, duplication, framing overhead), transport option and application kind,
//! with values drawn from the sensible, the extreme (0, 2^64 − 1, 1e300, negative) and the
//! wrong type. So validation of every field is reached, and what validation lets through is
//! built and simulated for up to 50 ms. Checks: no panic; an error renders and names its
//! field (`Invalid`) or its line (`Parse`).
//!
//! Trace files are looked up in `fuzz/traces/`. Run with
//! `cargo fuzz run --sanitizer none scenario_build` from the repository root.
#![no_main]

use std::fmt::Write;
use std::path::Path;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use triage_sim::scenario::{Scenario, ScenarioError};

const RATES: &[&str] = &[
    "\"1Mbps\"",
    "\"2Mbps\"",
    "\"10Mbps\"",
    "\"100Mbps\"",
    "\"1Gbps\"",
    "\"1bps\"",
    "\"0bps\"",
    "\"1.5kbps\"",
    "\"18446744073709551615bps\"",
    "\"1e300Mbps\"",
    "-5",
    "0",
    "1000000",
    "\"fast\"",
    "true",
];
const DELAYS: &[&str] = &[
    "\"0ms\"",
    "\"1ms\"",
    "\"10ms\"",
    "\"25ms\"",
    "\"100us\"",
    "\"1ns\"",
    "\"2s\"",
    "\"18446744073709551615ns\"",
    "\"-1ms\"",
    "\"1.5ms\"",
    "0",
    "\"10\"",
    "[1]",
];
const SIZES: &[&str] = &[
    "\"1B\"",
    "\"1448B\"",
    "\"64KiB\"",
    "\"1MiB\"",
    "\"10MB\"",
    "\"1GiB\"",
    "\"0B\"",
    "\"18446744073709551615B\"",
    "\"4294968744B\"",
    "\"1e300B\"",
    "-1",
    "100000",
    "\"1.5KiB\"",
];
const PROBS: &[&str] =
    &["0.0", "0.01", "0.2", "0.5", "1.0", "1.5", "-0.1", "\"5%\"", "\"150%\"", "1e300", "nan", "inf"];
const FLOATS: &[&str] = &["0.0", "0.3", "0.5", "1.0", "5.0", "30.0", "60.0", "-1.0", "1e300", "nan"];
const INTS: &[&str] = &["0", "1", "2", "3", "10", "100", "1000", "65535", "4294967295", "18446744073709551615", "-1"];
const TRACES: &[&str] = &["\"short.down\"", "\"short.up\"", "\"bursty.down\"", "\"empty.down\"", "\"missing.down\""];

fn pick<'a>(u: &mut Unstructured, xs: &[&'a str]) -> Result<&'a str> {
    Ok(xs[u.choose_index(xs.len())?])
}

fn queue(u: &mut Unstructured) -> Result<String> {
    let mut q = String::from("{ ");
    match u.int_in_range(0..=5u8)? {
        0 => write!(q, "packets = {}", pick(u, INTS)?).unwrap(),
        1 => write!(q, "bytes = {}", pick(u, SIZES)?).unwrap(),
        2 => {
            write!(
                q,
                "kind = \"red\", packets = {}, min_th = {}, max_th = {}",
                pick(u, INTS)?,
                pick(u, FLOATS)?,
                pick(u, FLOATS)?
            )
            .unwrap();
            if u.arbitrary()? {
                write!(
                    q,
                    ", ecn = {}, gentle = {}, max_p = {}",
                    u.arbitrary::<bool>()?,
                    u.arbitrary::<bool>()?,
                    pick(u, PROBS)?
                )
                .unwrap();
            }
            if u.arbitrary()? {
                write!(
                    q,
                    ", qw = {}, idle_rate = {}, mean_packet_size = {}",
                    pick(u, PROBS)?,
                    pick(u, RATES)?,
                    pick(u, SIZES)?
                )
                .unwrap();
            }
        }
        3 => {
            write!(
                q,
                "kind = \"eecn\", packets = {}, th1 = {}, th2 = {}",
                pick(u, INTS)?,
                pick(u, FLOATS)?,
                pick(u, FLOATS)?
            )
            .unwrap();
            if u.arbitrary()? {
                write!(
                    q,
                    ", horizon = {}, rate_window = {}, rate_buckets = {}",
                    pick(u, DELAYS)?,
                    pick(u, DELAYS)?,
                    pick(u, INTS)?
                )
                .unwrap();
            }
        }
        4 => {
            write!(q, "kind = \"vcp\", packets = {}", pick(u, INTS)?).unwrap();
            if u.arbitrary()? {
                write!(
                    q,
                    ", t_rho = {}, target_utilization = {}, kappa_q = {}",
                    pick(u, DELAYS)?,
                    pick(u, FLOATS)?,
                    pick(u, FLOATS)?
                )
                .unwrap();
            }
        }
        _ => write!(q, "kind = \"{}\"", pick(u, &["droptail", "fq_codel", "red"])?).unwrap(),
    }
    if u.ratio(1, 4)? {
        write!(q, ", device_packets = {}", pick(u, INTS)?).unwrap();
    }
    q.push_str(" }");
    Ok(q)
}

fn loss(u: &mut Unstructured) -> Result<String> {
    Ok(if u.arbitrary()? {
        format!("{{ kind = \"bernoulli\", loss_prob = {} }}", pick(u, PROBS)?)
    } else {
        format!(
            "{{ kind = \"gilbert_elliott\", p_good_to_bad = {}, p_bad_to_good = {}, loss_good = {}, loss_bad = {} }}",
            pick(u, PROBS)?,
            pick(u, PROBS)?,
            pick(u, PROBS)?,
            pick(u, PROBS)?
        )
    })
}

/// The fields of one link (inside an inline table, without braces).
fn link(u: &mut Unstructured) -> Result<String> {
    let mut l = format!("delay = {}", pick(u, DELAYS)?);
    let traced = u.ratio(1, 4)?;
    if traced {
        write!(l, ", trace = {}", pick(u, TRACES)?).unwrap();
        if u.arbitrary()? {
            write!(l, ", reverse_trace = {}", pick(u, TRACES)?).unwrap();
        } else {
            write!(l, ", reverse_rate = {}", pick(u, RATES)?).unwrap();
        }
    }
    if !traced || u.ratio(1, 8)? {
        write!(l, ", rate = {}", pick(u, RATES)?).unwrap();
    }
    if u.arbitrary()? {
        write!(l, ", queue = {}", queue(u)?).unwrap();
    }
    if u.ratio(1, 3)? {
        write!(l, ", loss = {}", loss(u)?).unwrap();
    }
    if u.ratio(1, 6)? {
        write!(l, ", reverse_loss = {}", loss(u)?).unwrap();
    }
    if u.ratio(1, 5)? {
        match u.int_in_range(0..=2u8)? {
            0 => write!(l, ", jitter = {{ kind = \"uniform\", max = {} }}", pick(u, DELAYS)?).unwrap(),
            1 => write!(l, ", jitter = {{ kind = \"exponential\", mean = {} }}", pick(u, DELAYS)?).unwrap(),
            _ => write!(l, ", jitter = {{ kind = \"uniform\", mean = {} }}", pick(u, DELAYS)?).unwrap(),
        }
    }
    if u.ratio(1, 6)? {
        write!(l, ", duplicate = {}", pick(u, PROBS)?).unwrap();
    }
    if u.ratio(1, 6)? {
        write!(l, ", overhead = {}", pick(u, &["2", "\"2B\"", "38", "\"1KiB\"", "\"2kB\"", "18446744073709551615", "-1", "\"two\"", "1.5"])?).unwrap();
    }
    Ok(l)
}

fn transport(u: &mut Unstructured, out: &mut String) -> Result<()> {
    let quic = u.ratio(1, 4)?;
    if quic {
        out.push_str("mode = \"quic\"\n");
    }
    let cc = pick(u, &["newreno", "bbr", "cubic", "newreno_ecn", "eecn", "vcp", "reno"])?;
    writeln!(out, "cc = \"{cc}\"").unwrap();
    let options: &[(&str, &[&str])] = &[
        ("hystart", &["true", "false"]),
        ("newreno_growth", &["\"bytes\"", "\"per_ack\"", "\"none\""]),
        ("ns3_compat", &["true", "false", "\"yes\""]),
        ("mss", SIZES),
        ("initial_window", INTS),
        ("delayed_ack_segments", INTS),
        ("delayed_ack_timeout", DELAYS),
        ("min_rto", DELAYS),
        ("initial_rto", DELAYS),
        ("receive_buffer", SIZES),
        ("send_buffer", SIZES),
        ("scheduler", &["\"fifo\"", "\"cats\"", "\"rr\"", "\"prio\"", "\"rfc9218\"", "\"lifo\""]),
        ("default_priority", INTS),
        ("priority_option", &["true", "false"]),
        ("ack_priority0_immediately", &["true", "false"]),
        ("dscp", &["[46, 34, 26, 18, 0]", "[1, 2]", "[255, 255, 255, 255, 255]"]),
        ("save_data", INTS),
        ("ecn", &["\"classic\"", "\"eecn\"", "\"vcp\"", "\"off\"", "\"l4s\""]),
        (
            "load_shedding",
            &[
                "{ consecutive_rtos = 2, loss_window_packets = 64, loss_rate = 0.2, min_priority = 3 }",
                "{ consecutive_rtos = 0, loss_window_packets = 0, loss_rate = 2.0, min_priority = 9 }",
                "{ loss_window_packets = 18446744073709551615 }",
            ],
        ),
        (
            "cats",
            &[
                "{ payback_multiplier = [1, 1, 2, 2, 3] }",
                "{ payback_multiplier = [0, 1, 2, 2, 4294967295] }",
                "{ high_watermark = [\"16KiB\", \"16KiB\", \"16KiB\", \"16KiB\", \"16KiB\"], low_watermark = [\"32KiB\", \"8KiB\", \"8KiB\", \"8KiB\", \"8KiB\"] }",
            ],
        ),
        ("vcp", &["{ t_rho = \"200ms\" }", "{ t_rho = \"18446744073709551615ns\" }"]),
        ("reliability", &["\"reliable\"", "\"fonts\"", "\"ads\"", "\"cats_level4\"", "\"bogus\""]),
        ("datagram_framing", &["\"h3\"", "\"quinn\"", "\"none\""]),
    ];
    for (name, values) in options {
        if u.ratio(1, 6)? {
            writeln!(out, "{name} = {}", pick(u, values)?).unwrap();
        }
    }
    Ok(())
}

fn app(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => "{ kind = \"sink\" }".to_string(),
        1 => format!("{{ kind = \"bulk\", size = {} }}", pick(u, SIZES)?),
        2 => {
            let mut m = String::from("{ kind = \"messages\", messages = [");
            for i in 0..u.int_in_range(0..=4u8)? {
                write!(m, "{{ name = \"m{i}\", size = {}, priority = {}", pick(u, SIZES)?, pick(u, INTS)?).unwrap();
                if u.arbitrary()? {
                    write!(m, ", at = {}", pick(u, DELAYS)?).unwrap();
                }
                if u.ratio(1, 4)? {
                    write!(m, ", unreliable = {}", u.arbitrary::<bool>()?).unwrap();
                }
                if u.ratio(1, 4)? {
                    m.push_str(", stream = \"s\"");
                }
                m.push_str("}, ");
            }
            m.push_str("] }");
            m
        }
        _ => format!("{{ kind = \"{}\" }}", pick(u, &["bulk", "page", "video"])?),
    })
}

fn scenario(u: &mut Unstructured) -> Result<String> {
    let mut s = String::new();
    writeln!(s, "name = \"fuzz\"\nseed = {}\nstop = {}", u.arbitrary::<u64>()?, pick(u, DELAYS)?).unwrap();
    s.push_str("\n[transport]\n");
    transport(u, &mut s)?;
    writeln!(s, "\n[measure]\ninterval = {}", pick(u, &["\"0ms\"", "\"10ms\"", "\"1ms\"", "\"1ns\""])?).unwrap();
    let hosts: Vec<String> = match u.int_in_range(0..=2u8)? {
        0 => {
            let pairs = u.int_in_range(1..=3u32)?;
            let pairs_text = if u.ratio(1, 8)? { pick(u, INTS)?.to_string() } else { pairs.to_string() };
            writeln!(s, "\n[topology]\nkind = \"dumbbell\"\npairs = {pairs_text}").unwrap();
            writeln!(s, "bottleneck = {{ {} }}", link(u)?).unwrap();
            writeln!(s, "access = {{ {} }}", link(u)?).unwrap();
            (0..pairs).flat_map(|i| [format!("s{i}"), format!("c{i}")]).collect()
        }
        1 => {
            s.push_str(
                "\n[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\", \"c\"]\nrouters = [\"r\"]\nlinks = [\n",
            );
            let names = ["a", "b", "c", "r"];
            for _ in 0..u.int_in_range(0..=4u8)? {
                let x = names[u.choose_index(4)?];
                let y = names[u.choose_index(4)?];
                writeln!(s, "  {{ between = [\"{x}\", \"{y}\"], {} }},", link(u)?).unwrap();
            }
            s.push_str("]\n");
            names[..3].iter().map(|n| n.to_string()).collect()
        }
        _ => {
            let name = pick(u, &["lighthouse-mobile-slow-4g", "lighthouse-mobile-3g", "nonexistent"])?;
            writeln!(s, "\n[topology]\nkind = \"profile\"\nname = \"{name}\"").unwrap();
            vec!["c0".to_string(), "s0".to_string()]
        }
    };
    for i in 0..u.int_in_range(0..=3u8)? {
        let client = &hosts[u.choose_index(hosts.len())?];
        let server = &hosts[u.choose_index(hosts.len())?];
        writeln!(s, "\n[[flows]]\nname = \"f{i}\"\nclient = \"{client}\"\nserver = \"{server}\"").unwrap();
        if u.arbitrary()? {
            writeln!(s, "start = {}", pick(u, DELAYS)?).unwrap();
        }
        if u.ratio(1, 4)? {
            writeln!(s, "start_jitter = {}", pick(u, DELAYS)?).unwrap();
        }
        if u.ratio(1, 4)? {
            writeln!(s, "page = \"{}\"", pick(u, &["builtin:cats", "builtin:bing", "builtin:nope", "missing.har"])?)
                .unwrap();
        } else {
            writeln!(s, "client_app = {}\nserver_app = {}", app(u)?, app(u)?).unwrap();
        }
        if u.ratio(1, 8)? {
            writeln!(s, "transport = {{ cc = \"{}\" }}", pick(u, &["bbr", "cubic", "newreno"])?).unwrap();
        }
    }
    if u.ratio(1, 6)? {
        s.push_str("\n[[variants]]\nname = \"a\"\ntransport = { scheduler = \"fifo\" }\n");
        s.push_str("\n[[variants]]\nname = \"b\"\ntransport = { scheduler = \"cats\" }\n");
    }
    Ok(s)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(text) = scenario(&mut u) else { return };
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let check = |e: &ScenarioError| {
        let msg = e.to_string();
        assert!(!msg.is_empty());
        match e {
            ScenarioError::Invalid { field, message, .. } => {
                assert!(!field.is_empty() && !message.is_empty(), "{msg}\n--- scenario:\n{text}")
            }
            ScenarioError::Parse { message, .. } => assert!(message.contains("line"), "{msg}\n--- scenario:\n{text}"),
            ScenarioError::Io { .. } => {}
        }
    };
    let s = match Scenario::parse(&text, "fuzz.toml") {
        Ok(s) => s,
        Err(e) => return check(&e),
    };
    match s.build_variants("fuzz.toml", Some(&traces)) {
        Ok(built) => {
            for (_, b) in built {
                let mut sim = b.sim;
                sim.run(b.stop_ns.min(50_000_000), |_| {});
            }
        }
        Err(e) => check(&e),
    }
});
