//! Speed Index of a recorded load from the screenshots of its Chrome trace, as Lighthouse
//! computes its observed Speed Index (the `speedline-core` package, with the options Lighthouse
//! gives it: the trace's time origin, fast mode):
//!
//! - The screenshots (`Screenshot` events: a base64 JPEG in `args.snapshot`, at `ts`) at or
//!   after the time origin, in time order, a screenshot identical to the one before dropped; a
//!   white frame is put first, at the time origin.
//! - Each frame is reduced to three 256-bin colour histograms (R, G, B), leaving out white
//!   pixels (all three channels ≥ 249), so the white frame's histograms are empty.
//! - A frame's visual progress against the first frame (initial) and the last (target) is
//!   `floor(100 · Σ min(|cur − init|, |target − init|) / Σ |target − init|)` over every bin of
//!   every channel, in percent (100 when the first and last frames have the same histograms).
//! - Fast mode: the progress of the first and last frames of a range is computed; when they
//!   differ by less than `6 · e^(ln(4/6) · Δt_s) − 1` percent, the frames between take the
//!   first one's progress; otherwise the range is split at its middle frame and each half
//!   treated the same way.
//! - Speed Index = (first frame with progress > 0) − origin, plus `Σ (t_i − t_{i−1}) ·
//!   (1 − progress_{i−1})` over the frames after it.
//!
//! JPEG decoders differ by a unit here and there in pixel values, which can move a histogram by
//! a few pixels, so the value can differ from Lighthouse's by a millisecond or so.

use base64::Engine;

/// A Speed Index and how many screenshots it could not use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpeedIndex {
    /// ns from the time origin; `None` without a decodable screenshot at or after it.
    pub speed_index_ns: Option<u64>,
    /// Screenshots left out: not base64, not a JPEG, not RGB, or over [`MAX_SIDE_PX`] a side.
    pub undecodable: usize,
}

type Histogram = [[u32; 256]; 3];

/// Largest screenshot side decoded (pixels).
pub const MAX_SIDE_PX: usize = 4096;

/// The colour histograms of a base64 JPEG, white pixels left out; `None` if it does not decode.
pub fn histogram(base64_jpeg: &str) -> Option<Box<Histogram>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(base64_jpeg.trim()).ok()?;
    // Screenshots are a few hundred pixels a side; a larger frame is not one (and is not
    // decoded: a bad trace must not make us allocate gigabytes).
    let opts = zune_jpeg::zune_core::options::DecoderOptions::default()
        .jpeg_set_out_colorspace(zune_jpeg::zune_core::colorspace::ColorSpace::RGB)
        .set_max_width(MAX_SIDE_PX)
        .set_max_height(MAX_SIDE_PX);
    let mut dec =
        zune_jpeg::JpegDecoder::new_with_options(zune_jpeg::zune_core::bytestream::ZCursor::new(&bytes), opts);
    let pixels = dec.decode().ok()?;
    if pixels.is_empty() || pixels.len() % 3 != 0 {
        return None;
    }
    let mut h = Box::new([[0u32; 256]; 3]);
    for p in pixels.chunks_exact(3) {
        if p[0] >= 249 && p[1] >= 249 && p[2] >= 249 {
            continue;
        }
        for c in 0..3 {
            h[c][p[c] as usize] += 1;
        }
    }
    Some(h)
}

/// speedline's `calculateFrameProgress`: percent of the way from `initial` to `target`.
pub fn progress(current: &Histogram, initial: &Histogram, target: &Histogram) -> u32 {
    let (mut matched, mut total) = (0u64, 0u64);
    for c in 0..3 {
        for v in 0..256 {
            let cur = u64::from(current[c][v].abs_diff(initial[c][v]));
            let tgt = u64::from(target[c][v].abs_diff(initial[c][v]));
            matched += cur.min(tgt);
            total += tgt;
        }
    }
    (matched * 100).checked_div(total).map_or(100, |p| p as u32)
}

/// speedline's fast-mode threshold (percent) for frames `elapsed_ms` apart.
fn allowable_change(elapsed_ms: f64) -> f64 {
    const MAX: f64 = 5.0;
    const MEDIAN: f64 = 3.0;
    const MIN: f64 = -1.0;
    (MAX - MIN) * (((MEDIAN - MIN) / (MAX - MIN)).ln() * elapsed_ms / 1000.0).exp() + MIN
}

/// Fills `progress[lo..=hi]` as speedline's fast mode does.
fn fast_progress(ts_ms: &[f64], progress: &mut [Option<u32>], lo: usize, hi: usize, exact: &dyn Fn(usize) -> u32) {
    let lower = *progress[lo].get_or_insert_with(|| exact(lo));
    let upper = *progress[hi].get_or_insert_with(|| exact(hi));
    if f64::from(lower.abs_diff(upper)) < allowable_change(ts_ms[hi] - ts_ms[lo]) {
        for p in &mut progress[lo + 1..hi] {
            *p = Some(lower);
        }
    } else if hi - lo > 1 {
        let mid = (lo + hi) / 2;
        fast_progress(ts_ms, progress, lo, mid, exact);
        fast_progress(ts_ms, progress, mid, hi, exact);
    }
}

/// Speed Index of `frames` (trace `ts` in µs, base64 JPEG) from the time origin `origin_us`.
pub fn speed_index(frames: &[(f64, &str)], origin_us: f64) -> SpeedIndex {
    let mut out = SpeedIndex::default();
    let mut shots: Vec<(f64, &str)> = frames.iter().copied().filter(|(ts, _)| *ts >= origin_us).collect();
    shots.sort_by(|a, b| a.0.total_cmp(&b.0));
    shots.dedup_by(|b, a| a.1 == b.1);
    // The white frame first: empty histograms.
    let mut ts_ms = vec![origin_us / 1000.0];
    let mut hists: Vec<Box<Histogram>> = vec![Box::new([[0; 256]; 3])];
    for (ts, shot) in shots {
        match histogram(shot) {
            Some(h) => {
                ts_ms.push(ts / 1000.0);
                hists.push(h);
            }
            None => out.undecodable += 1,
        }
    }
    let n = hists.len();
    if n < 2 {
        return out;
    }
    let exact = |i: usize| progress(&hists[i], &hists[0], &hists[n - 1]);
    let mut prog = vec![None; n];
    fast_progress(&ts_ms, &mut prog, 0, n - 1, &exact);
    let prog: Vec<f64> = prog.into_iter().map(|p| f64::from(p.unwrap_or(0)) / 100.0).collect();
    let Some(first) = (0..n).find(|&i| prog[i] > 0.0) else { return out };
    let mut si_ms = ts_ms[first] - ts_ms[0];
    for i in first + 1..n {
        si_ms += (ts_ms[i] - ts_ms[i - 1]) * (1.0 - prog[i - 1]);
    }
    out.speed_index_ns = Some((si_ms * 1e6).round() as u64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(pairs: &[(usize, usize, u32)]) -> Histogram {
        let mut h = [[0u32; 256]; 3];
        for &(c, v, n) in pairs {
            h[c][v] = n;
        }
        h
    }

    #[test]
    fn progress_is_the_matched_share_of_the_change_in_whole_percent() {
        let init = hist(&[(0, 10, 100)]);
        let target = hist(&[(0, 10, 40), (0, 200, 60)]);
        // Halfway: bin 10 moved 30 of its 60, bin 200 gained 30 of its 60 -> 60 / 120.
        let cur = hist(&[(0, 10, 70), (0, 200, 30)]);
        assert_eq!(progress(&cur, &init, &target), 50);
        // Overshooting a bin counts only up to the target's change: min(80, 60) + min(0, 60).
        let over = hist(&[(0, 10, 100), (0, 200, 80)]);
        assert_eq!(progress(&over, &init, &target), 50);
        // 1/3 floors to 33.
        let third = hist(&[(0, 10, 80), (0, 200, 20)]);
        assert_eq!(progress(&third, &init, &target), 33);
        assert_eq!(progress(&init, &init, &init), 100);
    }

    #[test]
    fn white_pixels_are_left_out_and_bad_frames_counted() {
        assert!(histogram("not base64 !").is_none());
        assert!(histogram("AAAA").is_none());
        let si = speed_index(&[(5.0, "AAAA")], 0.0);
        assert_eq!(si, SpeedIndex { speed_index_ns: None, undecodable: 1 });
    }

    #[test]
    fn fast_mode_threshold_is_speedlines() {
        // 5 % at 0 s, 3 % at 1 s (the median), tending to -1 %.
        assert!((allowable_change(0.0) - 5.0).abs() < 1e-12);
        assert!((allowable_change(1000.0) - 3.0).abs() < 1e-12);
        assert!((allowable_change(2000.0) - (6.0 * (4.0f64 / 6.0).powi(2) - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn fast_mode_interpolates_close_frames_and_splits_far_ones() {
        // Exact progress 0, 10, 12, 100 at 0, 100, 200, 300 ms.
        let ts = [0.0, 100.0, 200.0, 300.0];
        let exact_p = [0, 10, 12, 100];
        let mut p = vec![None; 4];
        fast_progress(&ts, &mut p, 0, 3, &|i| exact_p[i]);
        // 0 vs 100 splits at 1; [0, 1]: 0 vs 10 (> 4.4 %) has no frame between; [1, 3]: 10 vs
        // 100 splits at 2; every frame gets its exact value.
        assert_eq!(p, vec![Some(0), Some(10), Some(12), Some(100)]);
        let exact_q = [0, 2, 3, 4];
        let mut q = vec![None; 4];
        fast_progress(&ts, &mut q, 0, 3, &|i| exact_q[i]);
        // 0 vs 4 at 300 ms is under the 4.3 % allowed: the frames between take 0.
        assert_eq!(q, vec![Some(0), Some(0), Some(0), Some(4)]);
    }
}
