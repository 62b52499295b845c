//! SVG charts of the reproductions (plotters): time series as lines and values per category
//! as grouped bars, on a white canvas with a boxed legend.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What drawing a chart returns.
pub type ChartResult = Result<(), Box<dyn std::error::Error>>;

/// Series colours, in series order.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(90, 110, 140),
    RGBColor(220, 120, 40),
    RGBColor(60, 150, 80),
    RGBColor(200, 40, 60),
    RGBColor(130, 90, 180),
    RGBColor(140, 90, 70),
    RGBColor(210, 110, 180),
    RGBColor(120, 120, 120),
    RGBColor(170, 170, 40),
    RGBColor(40, 170, 190),
];

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

/// More series than this and [`per_repetition`] puts its legend in a column of its own
/// beside the plot instead of over it.
const LEGEND_INSIDE_MAX: usize = 6;

/// Values per repetition: repetitions 1..=R along x, one series of dots (joined or not) each,
/// so that a machine whose speed drifts from one repetition to the next shows it. Colours
/// cycle through [`PALETTE`]; a series in the second cycle marks its repetitions with
/// squares, in the third with triangles, so that no two series look alike up to 30 colours.
/// With more than [`LEGEND_INSIDE_MAX`] series the legend is a column to the right of the
/// plot (the canvas grows to hold it), not a box over the data.
pub fn per_repetition(path: &Path, title: &str, y_desc: &str, series: &[RepSeries]) -> ChartResult {
    let beside = series.len() > LEGEND_INSIDE_MAX;
    // One legend row of 18 pixels per series below a 60-pixel top, in a 340-pixel column.
    let (legend_w, height) = if beside { (340, (80 + 18 * series.len() as u32).max(480)) } else { (0, 480) };
    let root = canvas(path, (1000 + legend_w, height))?;
    let (plot, side) = root.split_horizontally(1000);
    let reps = series.iter().map(|s| s.values.len()).max().unwrap_or(1).max(1);
    let headroom = if beside { 1.1 } else { 1.35 };
    let ymax = series.iter().flat_map(|s| s.values.iter().flatten()).fold(0.0, |a: f64, &b| a.max(b)) * headroom;
    let mut chart = ChartBuilder::on(&plot)
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
    for (k, s) in series.iter().enumerate() {
        let c = PALETTE[s.colour % PALETTE.len()];
        // Beside the plot every mark can take its shape; over it (few series) all are circles.
        let shape = if beside { s.colour / PALETTE.len() % 3 } else { 0 };
        let (style, size) = if s.joined { (c.filled(), 3) } else { (c.stroke_width(2), 4) };
        let pts: Vec<(f64, f64)> =
            s.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| ((i + 1) as f64, v))).collect();
        if s.joined {
            let drawn = chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?;
            if !beside {
                drawn
                    .label(s.label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], c.stroke_width(2)));
            }
            marks(chart.plotting_area(), &pts, shape, size, style)?;
        } else if beside {
            marks(chart.plotting_area(), &pts, shape, size, style)?;
        } else {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, size, style)))?
                .label(s.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 7, y), size, style));
        }
        if beside {
            // The legend row: the line (joined series) and the mark, then the label.
            let y = 60 + 18 * k as i32;
            if s.joined {
                side.draw(&PathElement::new(vec![(10, y), (34, y)], c.stroke_width(2)))?;
            }
            marks(&side, &[(22, y)], shape, size, style)?;
            side.draw(&Text::new(
                s.label.clone(),
                (44, y),
                ("sans-serif", 13).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
    }
    if !beside {
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    }
    root.present()?;
    Ok(())
}

/// Marks at `pts` on `area`: circles (`shape` 0), squares (1) or triangles (2) of `size`.
fn marks<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    pts: &[CT::From],
    shape: usize,
    size: i32,
    style: ShapeStyle,
) -> ChartResult
where
    CT::From: Clone,
    DB::ErrorType: 'static,
{
    for p in pts {
        match shape {
            0 => area.draw(&Circle::new(p.clone(), size, style))?,
            1 => area.draw(&(EmptyElement::at(p.clone()) + Rectangle::new([(-size, -size), (size, size)], style)))?,
            _ => area.draw(&TriangleMarker::new(p.clone(), size + 1, style))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg_of(n: usize) -> String {
        let path = std::env::temp_dir().join(format!("triage-chart-{n}-{}.svg", std::process::id()));
        let series: Vec<RepSeries> = (0..n)
            .map(|i| RepSeries {
                label: format!("series-{i}"),
                values: vec![Some(1.0 + i as f64), None, Some(2.0)],
                colour: i,
                joined: i % 2 == 0,
            })
            .collect();
        per_repetition(&path, "t", "y", &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        svg
    }

    #[test]
    fn many_series_get_a_legend_column_and_every_label_once() {
        // Few series: the legend is boxed over the plot, on a 1000 x 480 canvas.
        let few = svg_of(LEGEND_INSIDE_MAX);
        assert!(few.contains(r#"width="1000" height="480""#), "{}", &few[..200]);
        // More: a 340-pixel column beside the plot, 18 pixels a row below a 80-pixel margin.
        let many = svg_of(25);
        assert!(many.contains(r#"width="1340" height="530""#), "{}", &many[..200]);
        for i in 0..25 {
            // plotters writes a text's content on a line of its own.
            assert_eq!(many.matches(&format!("\nseries-{i}\n")).count(), 1, "series-{i}");
        }
        // Series 10-19 (the palette's second cycle) mark with squares, 20-24 with triangles:
        // series 2, 12 and 22 share PALETTE[2] (all joined: filled marks of 3 pixels), as a
        // circle, a 6-pixel square and a triangle; the first cycle has no such square.
        let c = PALETTE[2];
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        let square = format!("width=\"6\" height=\"6\" opacity=\"1\" {fill}");
        assert!(many.contains(&square), "{square}");
        assert!(!svg_of(10).contains(&square));
        assert!(many.lines().any(|l| l.starts_with("<polygon") && l.contains(&fill)), "a triangle of {fill}");
    }
}
