//! The report's charts, drawn with `plotters` as inline SVG: bars per system, the efficiency
//! scatter (memory processing against prediction), and line charts (memorization over dialogs,
//! the learning curve over steps).

use plotters::prelude::*;

use super::RunRow;

/// A bar chart as inline SVG.
pub(super) fn bar_chart(
    title: &str,
    bars: &[(String, f64)],
) -> Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let top = bars
            .iter()
            .map(|(_, v)| *v)
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.1;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(60)
            .y_label_area_size(60)
            .build_cartesian_2d((0..bars.len()).into_segmented(), 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => {
                    bars.get(*i).map(|(n, _)| n.clone()).unwrap_or_default()
                }
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                Palette99::pick(i).filled(),
            )
        }))?;
        root.present()?;
    }
    Ok(svg)
}

/// Memory-processing against prediction time per case, one labelled point per system.
pub(super) fn efficiency_chart(group: &[&RunRow]) -> Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let x_top = group
            .iter()
            .map(|r| r.memory_seconds)
            .fold(0.0f64, f64::max)
            .max(1e-6)
            * 1.2;
        let y_top = group
            .iter()
            .map(|r| r.prediction_seconds)
            .fold(0.0f64, f64::max)
            .max(1e-6)
            * 1.2;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "memory processing vs prediction (s per case)",
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_top, 0.0..y_top)?;
        chart
            .configure_mesh()
            .x_desc("memory processing s/case")
            .y_desc("prediction s/case")
            .draw()?;
        chart.draw_series(group.iter().enumerate().map(|(i, r)| {
            EmptyElement::at((r.memory_seconds, r.prediction_seconds))
                + Circle::new((0, 0), 4, Palette99::pick(i).filled())
                + Text::new(r.system.clone(), (6, -6), ("sans-serif", 12))
        }))?;
        root.present()?;
    }
    Ok(svg)
}

/// Cumulative memorization time over the dialogs memorized, one line per system: the slope is
/// the cost per dialog, and a system's periodic consolidations show as steps.
pub(super) fn memorization_chart(group: &[&RunRow]) -> Result<String, Box<dyn std::error::Error>> {
    let lines: Vec<(&str, Vec<(f64, f64)>)> = group
        .iter()
        .filter(|r| !r.dialog_seconds.is_empty())
        .map(|r| {
            let mut total = 0.0;
            let points = r
                .dialog_seconds
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    total += s;
                    ((i + 1) as f64, total)
                })
                .collect();
            (r.system.as_str(), points)
        })
        .collect();
    let x_top = lines
        .iter()
        .map(|(_, p)| p.len() as f64)
        .fold(1.0f64, f64::max);
    line_chart(LineChart {
        caption: "memorization: cumulative seconds over training dialogs",
        x_desc: "dialogs memorized",
        y_desc: "seconds",
        x_top,
        x_labels: 10,
        x_label: &|x| format!("{x:.0}"),
        lines,
    })
}

/// Score after each step, one line per system: how a memory learns from the dialogs it gets.
pub(super) fn learning_chart(
    series: &[(String, Vec<(String, f64)>)],
) -> Result<String, Box<dyn std::error::Error>> {
    // The x labels are the steps of the longest series.
    let labels: Vec<String> = series
        .iter()
        .map(|(_, points)| points)
        .max_by_key(|points| points.len())
        .map(|points| points.iter().map(|(step, _)| step.clone()).collect())
        .unwrap_or_default();
    let lines = series
        .iter()
        .map(|(system, points)| {
            let line = points.iter().enumerate();
            (
                system.as_str(),
                line.map(|(x, (_, score))| (x as f64, *score)).collect(),
            )
        })
        .collect();
    line_chart(LineChart {
        caption: "score after each step",
        x_desc: "",
        y_desc: "score",
        x_top: labels.len().saturating_sub(1).max(1) as f64,
        x_labels: labels.len().max(1),
        // Steps sit at whole numbers; other ticks stay blank.
        x_label: &|x| {
            let step = x.round();
            if (x - step).abs() < 1e-9 && step >= 0.0 {
                labels.get(step as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        },
        lines,
    })
}

/// A chart with one line per system, from 0 on both axes.
struct LineChart<'a> {
    caption: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    /// Where the x axis ends.
    x_top: f64,
    /// How many x labels to draw, and what each says.
    x_labels: usize,
    x_label: &'a dyn Fn(&f64) -> String,
    /// Each system's points.
    lines: Vec<(&'a str, Vec<(f64, f64)>)>,
}

/// Draws `chart` as inline SVG, with a legend naming the systems.
fn line_chart(chart: LineChart) -> Result<String, Box<dyn std::error::Error>> {
    let y_top = chart
        .lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|(_, y)| *y))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut drawing = ChartBuilder::on(&root)
            .caption(chart.caption, ("sans-serif", 18))
            .margin(10)
            .margin_right(40)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..chart.x_top, 0.0..y_top)?;
        drawing
            .configure_mesh()
            .x_labels(chart.x_labels)
            .x_label_formatter(chart.x_label)
            .x_desc(chart.x_desc)
            .y_desc(chart.y_desc)
            .draw()?;
        for (i, (system, points)) in chart.lines.into_iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            drawing
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(system)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        }
        drawing
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}
