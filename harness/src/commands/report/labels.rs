//! Where the charts' text goes. An SVG has no text metrics, so each label's box is estimated
//! from its font size and length; labels beside scatter points are then placed so that no two
//! overlap: a deterministic search over offsets around each point. Points drawn on one spot
//! share one label, their names stacked, since no leader line could tell them apart.

/// The font of every chart.
pub(super) const FONT: &str = "sans-serif";

/// How wide a character is estimated to be, in ems: generous (sans-serif letters average
/// under 0.6 em), so that a label the estimate keeps apart is apart on screen.
const CHAR_EM: f64 = 0.64;

/// The font size `plotters` writes into the SVG for a style of `size`: it divides by 1.24.
pub(super) fn svg_size(size: f64) -> f64 {
    size / 1.24
}

/// The estimated width in pixels of `text` in a font of `plotters` size `size`.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    CHAR_EM * svg_size(size) * text.chars().count() as f64
}

/// The estimated height in pixels of a line of text in a font of `plotters` size `size`.
pub(super) fn text_height(size: f64) -> f64 {
    svg_size(size)
}

/// The distance between the baselines of stacked lines of text of `plotters` size `size`.
pub(super) fn line_height(size: f64) -> f64 {
    1.25 * svg_size(size)
}

/// The points that share a spot: groups of indices, each in the order given, the groups in the
/// order of their first point. A point joins the first group whose first point lies within
/// `within` pixels of it, markers so close that they read as one.
pub(super) fn coincident(points: &[(f64, f64)], within: f64) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, (x, y)) in points.iter().enumerate() {
        let near = |g: &&mut Vec<usize>| {
            g.first()
                .and_then(|&first| points.get(first))
                .is_some_and(|(gx, gy)| (gx - x).hypot(gy - y) <= within)
        };
        match groups.iter_mut().find(near) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// A box on the picture, in pixels (y grows downwards).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Area {
    /// The left edge's x.
    pub left: f64,
    /// The top edge's y.
    pub top: f64,
    /// The right edge's x.
    pub right: f64,
    /// The bottom edge's y.
    pub bottom: f64,
}

impl Area {
    /// The square of half-side `radius` around a point: what a marker covers.
    pub(super) fn around((x, y): (f64, f64), radius: f64) -> Self {
        Area {
            left: x - radius,
            top: y - radius,
            right: x + radius,
            bottom: y + radius,
        }
    }

    /// Whether the two boxes share any area.
    pub(super) fn overlaps(&self, other: &Area) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }

    /// Whether this box lies wholly within `outer`.
    fn within(&self, outer: &Area) -> bool {
        self.left >= outer.left
            && self.right <= outer.right
            && self.top >= outer.top
            && self.bottom <= outer.bottom
    }

    /// The point of this box nearest to `(x, y)`: where a leader line from there ends.
    fn nearest(&self, (x, y): (f64, f64)) -> (f64, f64) {
        // Not `clamp`, which panics on an inverted box.
        (
            x.max(self.left).min(self.right),
            y.max(self.top).min(self.bottom),
        )
    }

    /// Whether the segment from `from` to `to` passes through the inside of this box (sampled
    /// every pixel: exact enough for a picture, and simple).
    fn crossed_by(&self, (from, to): Leader) -> bool {
        let length = ((to.0 - from.0).powi(2) + (to.1 - from.1).powi(2)).sqrt();
        let steps = length.ceil().max(1.0) as usize;
        (0..=steps).any(|k| {
            let t = k as f64 / steps as f64;
            let (x, y) = (from.0 + t * (to.0 - from.0), from.1 + t * (to.1 - from.1));
            self.left < x && x < self.right && self.top < y && y < self.bottom
        })
    }
}

/// A line from a point to its label, when the label had to move away: (point, end on the
/// label's box).
pub(super) type Leader = ((f64, f64), (f64, f64));

/// How far (pixels) a label's box may be from its point's edge before a leader line joins them.
const NEAR: f64 = 6.0;

/// Space kept around a label's estimated box, in pixels.
const PAD: f64 = 2.0;

/// A label placed beside its point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Placement {
    /// Where the text starts (left end, vertical centre of the first line): draw it anchored
    /// left and centred, further lines each a line height below.
    pub at: (f64, f64),
    /// The box the text covers, padding included.
    pub area: Area,
    /// The line joining the label to its point, if it stands away from it.
    pub leader: Option<Leader>,
}

/// The directions tried around a point, in degrees counterclockwise from "to the right", in
/// order of preference: rightwards first (where a reader looks next), above before below,
/// left last. Every 15 degrees, so that labels fanning out of one crowded spot each find a
/// direction of their own, their leader lines clear of each other's labels.
const ANGLES: [i16; 24] = [
    0, 15, -15, 30, -30, 45, -45, 60, -60, 75, -75, 90, -90, 105, -105, 120, -120, 135, -135, 150,
    -150, 165, -165, 180,
];

/// How many rings of candidate offsets are tried around a point, each one line of text
/// further out than the last.
const RINGS: usize = 16;

/// Places a label of `size` (width, height in pixels, without padding; the height of all its
/// lines, whose first is `first_line` high) beside each point. Labels are placed one by one,
/// in each of a few orders (as given; right to left; left to right; top down; bottom up), and
/// the order that places the most wins, the earlier on a tie: a label placed early can bar
/// later ones, and which order suits depends on how the points lie. `None` for a point whose
/// label fits nowhere: the caller lists it elsewhere.
pub(super) fn place_labels(
    points: &[(f64, f64)],
    sizes: &[(f64, f64)],
    first_line: f64,
    bounds: Area,
    marker_radius: f64,
) -> Vec<Option<Placement>> {
    let given: Vec<usize> = (0..points.len().min(sizes.len())).collect();
    let by = |key: fn(&(f64, f64)) -> f64| {
        let mut order = given.clone();
        let at = |i: usize| points.get(i).map_or(0.0, key);
        order.sort_by(|&a, &b| at(a).total_cmp(&at(b)));
        order
    };
    let orders = [
        given.clone(),
        by(|p| -p.0),
        by(|p| p.0),
        by(|p| p.1),
        by(|p| -p.1),
    ];
    let mut best: Vec<Option<Placement>> = Vec::new();
    let mut best_count = None;
    for order in orders {
        let mut result = vec![None; given.len()];
        for (i, placement) in
            place_in_order(points, sizes, first_line, bounds, marker_radius, &order)
        {
            if let Some(slot) = result.get_mut(i) {
                *slot = Some(placement);
            }
        }
        let count = result.iter().flatten().count();
        if best_count.is_none_or(|best| count > best) {
            best_count = Some(count);
            best = result;
        }
        if count == given.len() {
            break;
        }
    }
    best
}

/// Places the labels of the points at `order`, one by one. Each label takes the first
/// candidate offset (by distance, then by direction) whose box stays inside `bounds`, overlaps
/// no label placed before it and no marker of `marker_radius`, and whose leader line (if it
/// needs one) crosses no earlier label, nor its box an earlier leader; when every candidate
/// covers some marker, the first that meets the rest will do. Returns the placed labels by
/// point.
fn place_in_order(
    points: &[(f64, f64)],
    sizes: &[(f64, f64)],
    first_line: f64,
    bounds: Area,
    marker_radius: f64,
    order: &[usize],
) -> Vec<(usize, Placement)> {
    let markers: Vec<Area> = points
        .iter()
        .map(|p| Area::around(*p, marker_radius))
        .collect();
    let mut placed: Vec<(usize, Placement)> = Vec::new();
    for &i in order {
        let (Some(point), Some(size)) = (points.get(i), sizes.get(i)) else {
            continue;
        };
        let fits = |c: &Placement, avoid_markers: bool| {
            c.area.within(&bounds)
                && placed.iter().all(|(_, p)| {
                    !p.area.overlaps(&c.area)
                        && p.leader.is_none_or(|l| !c.area.crossed_by(l))
                        && c.leader.is_none_or(|l| !p.area.crossed_by(l))
                })
                && !(avoid_markers && markers.iter().any(|m| m.overlaps(&c.area)))
        };
        let options = || candidates(*point, *size, first_line, marker_radius);
        let chosen = options()
            .find(|c| fits(c, true))
            .or_else(|| options().find(|c| fits(c, false)));
        if let Some(c) = chosen {
            placed.push((i, c));
        }
    }
    placed
}

/// The candidate placements of a label of `(width, height)` around `point`, nearest first:
/// in each ring, the label's box touches the point at the ring's distance in each direction
/// (its left side when the direction points right, its bottom when it points up, centred when
/// it points straight across); the first ring just clears the marker, each further ring is one
/// line of text further out.
fn candidates(
    (x, y): (f64, f64),
    (width, height): (f64, f64),
    first_line: f64,
    marker_radius: f64,
) -> impl Iterator<Item = Placement> {
    let (w, h) = (width + 2.0 * PAD, height + 2.0 * PAD);
    let step = first_line + 2.0 * PAD;
    (0..RINGS).flat_map(move |ring| {
        let gap = marker_radius + 1.0 + ring as f64 * step;
        ANGLES.iter().map(move |&angle| {
            let (up, right) = f64::from(angle).to_radians().sin_cos();
            let (ax, ay) = (x + gap * right, y - gap * up);
            let left = if right > 0.2 {
                ax
            } else if right < -0.2 {
                ax - w
            } else {
                ax - w / 2.0
            };
            let top = if up > 0.2 {
                ay - h
            } else if up < -0.2 {
                ay
            } else {
                ay - h / 2.0
            };
            let area = Area {
                left,
                top,
                right: left + w,
                bottom: top + h,
            };
            let end = area.nearest((x, y));
            let away = ((end.0 - x).powi(2) + (end.1 - y).powi(2)).sqrt();
            Placement {
                at: (left + PAD, top + PAD + first_line / 2.0),
                area,
                leader: (away > marker_radius + NEAR).then_some(((x, y), end)),
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plot of 600 × 400 pixels.
    const BOUNDS: Area = Area {
        left: 0.0,
        top: 0.0,
        right: 600.0,
        bottom: 400.0,
    };

    #[test]
    fn labels_of_crowded_points_fan_out_without_overlapping() {
        // Nine points by the origin of a plot (its lower left corner), a marker apart.
        let points: Vec<(f64, f64)> = (0..9).map(|i| (i as f64 * 9.0, 400.0)).collect();
        let sizes = vec![(100.0, 12.0); 9];
        let placed = place_labels(&points, &sizes, 12.0, BOUNDS, 4.0);
        let areas: Vec<Area> = placed.iter().map(|p| p.unwrap().area).collect();
        for (i, a) in areas.iter().enumerate() {
            assert!(a.within(&BOUNDS));
            assert!(areas[i + 1..].iter().all(|b| !a.overlaps(b)), "{areas:?}");
        }
        // The same input, the same picture.
        assert_eq!(placed, place_labels(&points, &sizes, 12.0, BOUNDS, 4.0));
    }

    #[test]
    fn points_on_one_spot_share_a_label() {
        let points = [(10.0, 10.0), (50.0, 50.0), (11.0, 12.0), (10.0, 10.0)];
        assert_eq!(coincident(&points, 4.0), vec![vec![0, 2, 3], vec![1]]);
    }

    #[test]
    fn a_label_with_no_room_is_not_placed() {
        let small = Area {
            right: 60.0,
            bottom: 30.0,
            ..BOUNDS
        };
        let placed = place_labels(&[(30.0, 15.0); 2], &[(20.0, 10.0); 2], 10.0, small, 3.0);
        assert!(placed[0].is_some());
        // Too wide to fit at all.
        let wide = place_labels(&[(30.0, 15.0)], &[(100.0, 10.0)], 10.0, small, 3.0);
        assert_eq!(wide, vec![None]);
    }
}
