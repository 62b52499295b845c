//! SVG charts of the reproductions (plotters): time series as lines and values per category
//! as grouped bars, on a white canvas with a boxed legend.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What drawing a chart returns.
pub type ChartResult = Result<(), Box<dyn std::error::Error>>;

/// Series colours, in series order.
pub const PALETTE: [RGBColor; 4] =
    [RGBColor(90, 110, 140), RGBColor(220, 120, 40), RGBColor(60, 150, 80), RGBColor(200, 40, 60)];

/// A white SVG canvas of `size` pixels that will be written to `path`.
pub fn canvas(path: &Path, size: (u32, u32)) -> Result<DrawingArea<SVGBackend<'_>, Shift>, Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

/// Draws the series labels at `position`, boxed on a light background.
pub fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> ChartResult {
    chart.configure_series_labels().position(position).border_style(BLACK).background_style(WHITE.mix(0.9)).draw()?;
    Ok(())
}

/// Time series, one line per series; points are (ms, value) and the axis shows seconds.
pub fn lines(path: &Path, title: &str, y_desc: &str, series: &[(String, Vec<(f64, f64)>)]) -> ChartResult {
    let root = canvas(path, (1000, 480))?;
    let xmax = series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).fold(1.0, f64::max);
    let ymax = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..xmax / 1000.0, 0f64..ymax.max(1e-3))?;
    chart.configure_mesh().x_desc("time (s)").y_desc(y_desc).draw()?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(pts.iter().map(|p| (p.0 / 1000.0, p.1)), c.stroke_width(1)))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], c.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present()?;
    Ok(())
}

/// Grouped bars: one group per category, one bar per series (no whiskers).
pub fn bars(path: &Path, title: &str, y_desc: &str, cats: &[String], series: &[(String, Vec<f64>)]) -> ChartResult {
    let series: Vec<(String, Vec<(f64, f64)>)> =
        series.iter().map(|(l, v)| (l.clone(), v.iter().map(|&x| (x, 0.0)).collect())).collect();
    bars_with_error(path, title, y_desc, cats, &series)
}

/// Grouped bars with error bars: one group per category, one bar per series; each value is
/// (mean, standard deviation) and the whisker spans mean ± deviation (clipped at 0); a
/// deviation of 0 draws none. A mean that is not finite (NaN: no value) draws no bar but
/// "not done" at its place.
pub fn bars_with_error(
    path: &Path,
    title: &str,
    y_desc: &str,
    cats: &[String],
    series: &[(String, Vec<(f64, f64)>)],
) -> ChartResult {
    let root = canvas(path, (1000, 480))?;
    let ymax = series.iter().flat_map(|s| s.1.iter().map(|(m, d)| m + d)).fold(0.0, f64::max) * 1.4;
    let n = cats.len().max(1) as u32;
    let k = series.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax.max(1e-3))?;
    // Category names are drawn under each group of bars (the mesh's own x labels fall on
    // "nice" numbers, not on the group centres); the top 30% is left free for the legend.
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc(y_desc).draw()?;
    let style = TextStyle::from(("sans-serif", 14)).pos(Pos::new(HPos::Center, VPos::Top));
    chart.draw_series(
        cats.iter()
            .enumerate()
            .map(|(i, c)| EmptyElement::at((i as f64 + 0.5, 0.0)) + Text::new(c.clone(), (0, 8), style.clone())),
    )?;
    for (j, (label, vals)) in series.iter().enumerate() {
        let c = PALETTE[j % PALETTE.len()];
        let x0 = |i: usize| i as f64 + 0.1 + 0.8 * j as f64 / k;
        chart
            .draw_series(
                vals.iter()
                    .enumerate()
                    .filter(|(_, (m, _))| m.is_finite())
                    .map(|(i, (m, _))| Rectangle::new([(x0(i), 0.0), (x0(i) + 0.8 / k, *m)], c.filled())),
            )?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
        // A value that does not exist (a flow that never finished) is said, not drawn as 0.
        let missing = TextStyle::from(("sans-serif", 11)).color(&c).pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(vals.iter().enumerate().filter(|(_, (m, _))| !m.is_finite()).map(|(i, _)| {
            EmptyElement::at((x0(i) + 0.4 / k, 0.0)) + Text::new("not done", (0, -4), missing.clone())
        }))?;
        // Whiskers: a vertical line from mean − deviation to mean + deviation, capped.
        let cap = 0.15 / k;
        chart.draw_series(vals.iter().enumerate().filter(|(_, (_, d))| *d > 1e-9).flat_map(|(i, (m, d))| {
            let x = x0(i) + 0.4 / k;
            let (lo, hi) = ((m - d).max(0.0), m + d);
            [
                PathElement::new(vec![(x, lo), (x, hi)], BLACK.stroke_width(1)),
                PathElement::new(vec![(x - cap, lo), (x + cap, lo)], BLACK.stroke_width(1)),
                PathElement::new(vec![(x - cap, hi), (x + cap, hi)], BLACK.stroke_width(1)),
            ]
        }))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present()?;
    Ok(())
}

/// One series of a [`per_repetition`] chart.
pub struct RepSeries {
    /// Legend label.
    pub label: String,
    /// A value per repetition, in the order they ran (`None`: none for that repetition).
    pub values: Vec<Option<f64>>,
    /// Palette index of its colour.
    pub colour: usize,
    /// Drawn as a line through filled dots (`true`) or as hollow dots alone (`false`).
    pub joined: bool,
}

/// Values per repetition: repetitions 1..=R along x, one series of dots (joined or not) each,
/// so that a machine whose speed drifts from one repetition to the next shows it.
pub fn per_repetition(path: &Path, title: &str, y_desc: &str, series: &[RepSeries]) -> ChartResult {
    let root = canvas(path, (1000, 480))?;
    let reps = series.iter().map(|s| s.values.len()).max().unwrap_or(1).max(1);
    let ymax = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0, |a: f64, &b| a.max(b)) * 1.35;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5f64..reps as f64 + 0.5, 0f64..ymax.max(1e-3))?;
    // Whole-numbered ticks only: a repetition is a count.
    chart
        .configure_mesh()
        .x_labels(reps.min(30) + 1)
        .x_label_formatter(&|x| if x.fract().abs() < 1e-9 { format!("{x:.0}") } else { String::new() })
        .x_desc("repetition")
        .y_desc(y_desc)
        .draw()?;
    for s in series {
        let c = PALETTE[s.colour % PALETTE.len()];
        let pts: Vec<(f64, f64)> =
            s.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| ((i + 1) as f64, v))).collect();
        if s.joined {
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                .label(s.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], c.stroke_width(2)));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        } else {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.stroke_width(2))))?
                .label(s.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 7, y), 4, c.stroke_width(2)));
        }
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present()?;
    Ok(())
}
