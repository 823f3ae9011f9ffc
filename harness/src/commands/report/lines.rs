//! The report's line charts, one line per system: memorization over dialogs and the learning
//! curve over steps. The legend sits beside the plot, not on it, so it hides no line; step
//! names on the x axis are thinned out to every k-th step when they would not fit side by side.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::{tick_text, titled, CAPTION_AREA, LABEL_SIZE, MARGIN, NAMES_MAX, WIDTH};
use super::labels::{text_width, FONT};
use super::runs::RunRow;

/// A line chart's least height in pixels; it grows when the legend needs more.
const HEIGHT: u32 = 420;
/// The height of one legend entry, in pixels.
const LEGEND_ROW: u32 = 22;
/// Where the legend's first entry sits, below the caption, in pixels.
const LEGEND_TOP: u32 = 20;
/// The width of the y axis's label area, in pixels.
const Y_LABEL_AREA: u32 = 85;

/// Cumulative memorization time over the dialogs memorized, one line per system: the slope is
/// the cost per dialog, and a system's periodic consolidations show as steps.
pub(super) fn memorization_chart(group: &[&RunRow]) -> Result<String, Box<dyn std::error::Error>> {
    let lines: Vec<(&str, Vec<(i32, f64)>)> = group
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
                    ((i + 1) as i32, total)
                })
                .collect();
            (r.system.as_str(), points)
        })
        .collect();
    let x_top = lines.iter().map(|(_, p)| p.len()).fold(1, usize::max) as i32;
    line_chart(LineChart {
        caption: "memorization: cumulative seconds over training dialogs",
        x_desc: "dialogs memorized",
        y_desc: "seconds",
        x_top,
        x_ticks: None,
        lines,
    })
}

/// The training loss of an SFT run over its optimizer steps (`sft-train` writes it beside the
/// run as `loss.svg`); skipped steps (a loss that is not finite) leave gaps.
pub(crate) fn loss_chart(
    label: &str,
    losses: &[f64],
) -> Result<String, Box<dyn std::error::Error>> {
    let points = losses
        .iter()
        .enumerate()
        .filter(|(_, loss)| loss.is_finite())
        .map(|(i, loss)| ((i + 1) as i32, *loss))
        .collect();
    line_chart(LineChart {
        caption: "SFT: training loss per optimizer step",
        x_desc: "step",
        y_desc: "mean loss per learned token",
        x_top: losses.len().max(1) as i32,
        x_ticks: None,
        lines: vec![(label, points)],
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
                line.map(|(x, (_, score))| (x as i32, *score)).collect(),
            )
        })
        .collect();
    line_chart(LineChart {
        caption: "score after each step",
        x_desc: "",
        y_desc: "score",
        x_top: labels.len().saturating_sub(1).max(1) as i32,
        x_ticks: Some(&labels),
        lines,
    })
}

/// A chart with one line per system, from 0 on both axes.
struct LineChart<'a> {
    /// The title above the chart.
    caption: &'a str,
    /// What the x and y axes measure.
    x_desc: &'a str,
    y_desc: &'a str,
    /// Where the x axis ends. The axis is of whole numbers (dialogs, steps), which lets it
    /// take exact tick positions.
    x_top: i32,
    /// The names of the points 0, 1, 2… on the x axis (the steps), or `None` for plain numbers.
    x_ticks: Option<&'a [String]>,
    /// Each system's points.
    lines: Vec<(&'a str, Vec<(i32, f64)>)>,
}

/// Every how many ticks a name goes on the x axis so that names `width` pixels wide (the
/// widest) stand apart along `length` pixels holding `count` ticks.
fn tick_stride(count: usize, width: f64, length: f64) -> usize {
    let room = length / count.saturating_sub(1).max(1) as f64;
    ((width + 12.0) / room).ceil().max(1.0) as usize
}

/// Draws `chart` as inline SVG, with a legend naming the systems to the right of the plot.
fn line_chart(chart: LineChart) -> Result<String, Box<dyn std::error::Error>> {
    let y_top = chart
        .lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|(_, y)| *y))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.1;
    let legend_width = chart
        .lines
        .iter()
        .map(|(name, _)| text_width(name, LABEL_SIZE))
        .fold(0.0f64, f64::max)
        .ceil() as u32
        + 44;
    let height =
        HEIGHT.max(CAPTION_AREA + LEGEND_TOP + LEGEND_ROW * chart.lines.len() as u32 + MARGIN);
    let plot_width = WIDTH - legend_width.min(NAMES_MAX);
    // The x axis's ticks: every step when the names fit, else every k-th (the last kept).
    let ticks: Vec<i32> = match chart.x_ticks {
        Some(names) => {
            let widest = names
                .iter()
                .map(|n| text_width(n, LABEL_SIZE))
                .fold(0.0f64, f64::max);
            let length = f64::from(plot_width.saturating_sub(Y_LABEL_AREA + 3 * MARGIN));
            let stride = tick_stride(names.len(), widest, length);
            let last = names.len().saturating_sub(1);
            (0..names.len())
                .filter(|i| (last - i) % stride == 0)
                .map(|i| i as i32)
                .collect()
        }
        // Whole dialogs, about ten ticks.
        None => {
            let step = ((chart.x_top + 9) / 10).max(1);
            (0..=chart.x_top / step).map(|k| k * step).collect()
        }
    };
    let x_label = |x: &i32| match chart.x_ticks {
        Some(names) => usize::try_from(*x)
            .ok()
            .and_then(|i| names.get(i))
            .cloned()
            .unwrap_or_default(),
        None => x.to_string(),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, chart.caption)?;
        let (plot_area, legend_area) = area.split_horizontally(plot_width);
        let mut builder = ChartBuilder::on(&plot_area);
        builder
            .margin(MARGIN)
            .margin_right(2 * MARGIN)
            .x_label_area_size(50)
            .y_label_area_size(Y_LABEL_AREA);
        let mut drawing =
            builder.build_cartesian_2d((0..chart.x_top).with_key_points(ticks), 0.0..y_top)?;
        drawing
            .configure_mesh()
            .label_style((FONT, LABEL_SIZE))
            .max_light_lines(4)
            .y_labels(8)
            .y_label_formatter(&tick_text)
            .x_label_formatter(&x_label)
            .x_desc(chart.x_desc)
            .y_desc(chart.y_desc)
            .draw()?;
        let style = (FONT, LABEL_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, (system, points)) in chart.lines.into_iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            drawing.draw_series(LineSeries::new(points, colour.stroke_width(2)))?;
            let y = (LEGEND_TOP + LEGEND_ROW * i as u32) as i32;
            legend_area.draw(&PathElement::new(
                vec![(4, y), (28, y)],
                colour.stroke_width(3),
            ))?;
            legend_area.draw(&Text::new(system.to_string(), (34, y), style.clone()))?;
        }
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::tick_stride;

    #[test]
    fn step_names_are_thinned_out_only_when_they_would_touch() {
        // Eleven names 40 pixels wide along 600 pixels: every one fits.
        assert_eq!(tick_stride(11, 40.0, 600.0), 1);
        // Twenty-one of them do not: every other.
        assert_eq!(tick_stride(21, 40.0, 600.0), 2);
        // One name alone.
        assert_eq!(tick_stride(1, 40.0, 600.0), 1);
    }
}
