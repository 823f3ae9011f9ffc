//! The report's bar charts, drawn with `plotters` as inline SVG, and what all its charts share:
//! their width and type sizes. Bars run across, one row per system with its name on the left
//! and its value at the bar's end, so names of any length stay apart however many systems a
//! report compares.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::{text_width, FONT};

/// The width of every chart in pixels: it fits a laptop's window beside the page's margins.
pub(super) const WIDTH: u32 = 760;
/// The type size of a chart's caption.
pub(super) const CAPTION_SIZE: f64 = 22.0;
/// The type size of everything else on a chart: names, values, axis labels.
pub(super) const LABEL_SIZE: f64 = 15.0;
/// The most of a chart's width that names (a bar chart's label area, a legend) may take, in
/// pixels: a name longer than that runs past its room rather than squeeze the plot away.
pub(super) const NAMES_MAX: u32 = WIDTH / 3;
/// The margin around a chart's drawing, in pixels.
pub(super) const MARGIN: u32 = 10;

/// The height of one system's row in a bar chart, in pixels.
const ROW: u32 = 28;
/// How many units of the y axis a row spans: rows sit on whole numbers, so that the axis
/// takes exact tick positions (plotters formats only integer axes with given ticks).
const UNITS: i32 = 100;
/// The height of the band holding a chart's caption, in pixels.
pub(super) const CAPTION_AREA: u32 = 40;
/// The height below a bar chart's rows, where its value axis goes, in pixels.
const AXIS_AREA: u32 = 36;

/// A value as a bar chart writes it at its bar's end: four significant digits or so, never
/// in exponent form.
pub(super) fn value_text(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    }
}

/// Draws `title` centred across the top of `root`, over the chart's whole width, and returns
/// the area below it, where the chart goes: the caption's own band keeps it clear of the
/// axes' labels however long it is.
pub(super) fn titled<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, Box<dyn std::error::Error>> {
    let (band, rest) = root.split_vertically(CAPTION_AREA);
    let style = (FONT, CAPTION_SIZE)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Center));
    band.draw(&Text::new(
        title.to_string(),
        ((WIDTH / 2) as i32, (CAPTION_AREA / 2) as i32),
        style,
    ))?;
    Ok(rest)
}

/// A number on an axis as written: shortest form ("2000", not "2000.0"; "0.015", not
/// "0.015000000000000001"), and below a thousandth in exponent form ("4e-7", not "0.0000004"),
/// so that no tick label grows wider than its axis's label area.
pub(super) fn tick_text(value: &f64) -> String {
    if *value == 0.0 {
        "0".to_string()
    } else if value.abs() < 1e-3 {
        // Three significant digits at most, trailing zeros dropped: 4.00e-7 is 4e-7.
        let text = format!("{value:.2e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => {
                let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{mantissa}e{exponent}")
            }
            _ => text,
        }
    } else {
        let rounded = (value * 1e9).round() / 1e9;
        format!("{rounded}")
    }
}

/// A bar chart as inline SVG: one row per system, top to bottom in the order given.
pub(super) fn bar_chart(
    title: &str,
    bars: &[(String, f64)],
) -> Result<String, Box<dyn std::error::Error>> {
    let rows = bars.len().max(1);
    let height = CAPTION_AREA + AXIS_AREA + ROW * rows as u32 + 2 * MARGIN;
    let name_width = bars
        .iter()
        .map(|(name, _)| text_width(name, LABEL_SIZE))
        .fold(0.0f64, f64::max);
    let value_width = bars
        .iter()
        .map(|(_, v)| text_width(&value_text(*v), LABEL_SIZE))
        .fold(0.0f64, f64::max);
    // All zero: an axis from 0 to 1 still reads as "nothing".
    let top = match bars.iter().map(|(_, v)| *v).fold(0.0f64, f64::max) {
        top if top > 0.0 => top,
        _ => 1.0,
    };
    // Row `i` (from the top) spans `rows - 1 - i` to `rows - i` rows up the y axis; its name
    // is the label at the row's middle.
    let row_base = |i: usize| (rows - 1 - i) as i32 * UNITS;
    let centres: Vec<i32> = (0..rows).map(|i| row_base(i) + UNITS / 2).collect();
    let name_at = |y: &i32| {
        let from_top = rows as i32 - 1 - y.div_euclid(UNITS);
        usize::try_from(from_top)
            .ok()
            .and_then(|i| bars.get(i))
            .map(|(name, _)| name.clone())
            .unwrap_or_default()
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, title)?;
        let mut chart = ChartBuilder::on(&area)
            .margin(MARGIN)
            // The values at the bars' ends may run past the axis's end.
            .margin_right(MARGIN + (value_width.ceil() as u32 + 8).min(NAMES_MAX))
            .x_label_area_size(AXIS_AREA)
            .y_label_area_size((name_width.ceil() as u32 + 16).min(NAMES_MAX))
            .build_cartesian_2d(0.0..top, (0..rows as i32 * UNITS).with_key_points(centres))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .label_style((FONT, LABEL_SIZE))
            .max_light_lines(4)
            .x_labels(6)
            .x_label_formatter(&tick_text)
            .y_label_formatter(&name_at)
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            Rectangle::new(
                [(0.0, row_base(i) + 18), (*v, row_base(i) + 82)],
                Palette99::pick(i).filled(),
            )
        }))?;
        let value_style = (FONT, LABEL_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, (_, v)) in bars.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(*v, row_base(i) + UNITS / 2));
            root.draw(&Text::new(value_text(*v), (x + 5, y), value_style.clone()))?;
        }
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::{tick_text, value_text};

    #[test]
    fn numbers_are_written_short() {
        assert_eq!(tick_text(&2000.0), "2000");
        assert_eq!(tick_text(&0.015000000000000001), "0.015");
        assert_eq!(tick_text(&-0.0), "0");
        assert_eq!(tick_text(&0.000_000_4), "4e-7");
        assert_eq!(tick_text(&0.000_15), "1.5e-4");
        assert_eq!(tick_text(&0.0015), "0.0015");
        assert_eq!(tick_text(&2e-10), "2e-10");
        assert_eq!(value_text(11_020.4), "11020");
        assert_eq!(value_text(15.24), "15.2");
        assert_eq!(value_text(0.017_76), "0.0178");
    }
}
