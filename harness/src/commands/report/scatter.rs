//! The efficiency scatter: memory processing against prediction time per case, one point per
//! system. Most systems spend next to nothing on memory, so their points crowd the origin; each
//! name is placed apart from the others (see [`super::labels`]), joined to its point by a
//! leader line when it had to move away; points drawn on one spot share a label listing their
//! names, and a name that fits nowhere is listed in a legend beside the plot instead.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::{tick_text, titled, LABEL_SIZE, MARGIN, NAMES_MAX, WIDTH};
use super::labels::{
    coincident, line_height, place_labels, text_height, text_width, Area, Placement, FONT,
};
use super::runs::RunRow;

/// The scatter's height in pixels.
const HEIGHT: u32 = 460;
/// A point's radius in pixels.
const RADIUS: i32 = 4;
/// The width of the y axis's label area, in pixels: tick labels of up to seven characters
/// and the axis's description.
const Y_LABEL_AREA: u32 = 85;
/// The height of one legend entry, in pixels.
const LEGEND_ROW: i32 = 22;
/// Where the legend's first entry sits, below the caption, in pixels.
const LEGEND_TOP: i32 = 20;

/// Memory-processing against prediction time per case, one labelled point per system.
pub(super) fn efficiency_chart(group: &[&RunRow]) -> Result<String, Box<dyn std::error::Error>> {
    let (svg, all_placed) = draw(group, false)?;
    if all_placed {
        return Ok(svg);
    }
    // Some names found no room: draw again with a legend beside the plot.
    Ok(draw(group, true)?.0)
}

/// Draws the scatter, with a legend for the names that fit nowhere when `legend` (without
/// one, such names are left out); says whether every name went beside its point.
fn draw(group: &[&RunRow], legend: bool) -> Result<(String, bool), Box<dyn std::error::Error>> {
    let legend_width = if legend {
        let widest = group
            .iter()
            .map(|r| text_width(&r.system, LABEL_SIZE))
            .fold(0.0f64, f64::max);
        (widest.ceil() as u32 + 40).min(NAMES_MAX)
    } else {
        0
    };
    let x_top = group
        .iter()
        .map(|r| r.memory_seconds)
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.15;
    let y_top = group
        .iter()
        .map(|r| r.prediction_seconds)
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.15;
    let mut svg = String::new();
    let all_placed;
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let area = titled(&root, "memory processing vs prediction (s per case)")?;
        let (plot_area, legend_area) = area.split_horizontally(WIDTH - legend_width);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(MARGIN)
            .margin_right(2 * MARGIN)
            .x_label_area_size(50)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(0.0..x_top, 0.0..y_top)?;
        chart
            .configure_mesh()
            .label_style((FONT, LABEL_SIZE))
            .max_light_lines(4)
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&tick_text)
            .y_label_formatter(&tick_text)
            .x_desc("memory processing s/case")
            .y_desc("prediction s/case")
            .draw()?;
        chart.draw_series(group.iter().enumerate().map(|(i, r)| {
            Circle::new(
                (r.memory_seconds, r.prediction_seconds),
                RADIUS,
                Palette99::pick(i).filled(),
            )
        }))?;
        let points: Vec<(f64, f64)> = group
            .iter()
            .map(|r| {
                let (x, y) = chart.backend_coord(&(r.memory_seconds, r.prediction_seconds));
                (f64::from(x), f64::from(y))
            })
            .collect();
        // Points on one spot share a label: their names, stacked.
        let spots = coincident(&points, f64::from(RADIUS));
        let line = line_height(LABEL_SIZE);
        let anchors: Vec<(f64, f64)> = spots
            .iter()
            .filter_map(|spot| spot.first().and_then(|&i| points.get(i)).copied())
            .collect();
        let sizes: Vec<(f64, f64)> = spots
            .iter()
            .map(|spot| {
                let widest = spot
                    .iter()
                    .filter_map(|&i| group.get(i))
                    .map(|r| text_width(&r.system, LABEL_SIZE))
                    .fold(0.0f64, f64::max);
                let lines = spot.len().saturating_sub(1) as f64;
                (widest, text_height(LABEL_SIZE) + lines * line)
            })
            .collect();
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let bounds = Area {
            left: f64::from(xs.start),
            top: f64::from(ys.start),
            right: f64::from(xs.end),
            bottom: f64::from(ys.end),
        };
        let placements = place_labels(
            &anchors,
            &sizes,
            text_height(LABEL_SIZE),
            bounds,
            f64::from(RADIUS),
        );
        all_placed = placements.iter().all(Option::is_some);
        let style = (FONT, LABEL_SIZE)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let names = |spot: &[usize]| -> Vec<String> {
            spot.iter()
                .filter_map(|&i| group.get(i))
                .map(|r| r.system.clone())
                .collect()
        };
        for (spot, placement) in spots.iter().zip(&placements) {
            if let Some(placement) = placement {
                draw_label(&root, &names(spot), placement, line, &style)?;
            }
        }
        if legend {
            // The names without a place, each beside its point's colour.
            let unplaced = spots
                .iter()
                .zip(&placements)
                .filter(|(_, p)| p.is_none())
                .flat_map(|(spot, _)| spot);
            for (entry, &i) in unplaced.enumerate() {
                let Some(row) = group.get(i) else { continue };
                let y = LEGEND_TOP + entry as i32 * LEGEND_ROW;
                legend_area.draw(&Circle::new((14, y), RADIUS, Palette99::pick(i).filled()))?;
                legend_area.draw(&Text::new(row.system.clone(), (26, y), style.clone()))?;
            }
        }
        root.present()?;
    }
    Ok((svg, all_placed))
}

/// Draws the names of a spot's points where they were placed, one line each, with the leader
/// line back to the spot if any.
fn draw_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    names: &[String],
    placement: &Placement,
    line: f64,
    style: &TextStyle,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let pixel = |(x, y): (f64, f64)| (x.round() as i32, y.round() as i32);
    if let Some((from, to)) = placement.leader {
        root.draw(&PathElement::new(
            vec![pixel(from), pixel(to)],
            RGBColor(120, 120, 120).stroke_width(1),
        ))?;
    }
    let (x, y) = placement.at;
    for (k, name) in names.iter().enumerate() {
        let at = pixel((x, y + k as f64 * line));
        root.draw(&Text::new(name.clone(), at, style.clone()))?;
    }
    Ok(())
}
