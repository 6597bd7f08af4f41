//! Where the labels of reference lines go so that no two print over each other: each label
//! keeps the place its figure asked for unless a label placed before it is there, and then
//! moves one text row at a time, away from the nearer edge of the plot, to the first free
//! place. Pixel boxes in, pixel tops out: the drawing code measures the text.

/// A label's box in pixels (screen coordinates: y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LabelBox {
    pub(super) left: i32,
    pub(super) right: i32,
    pub(super) top: i32,
    pub(super) height: i32,
}

/// Horizontal room kept between two labels on one row.
const GAP: i32 = 4;

impl LabelBox {
    fn at(self, top: i32) -> Self {
        Self { top, ..self }
    }

    fn overlaps(&self, other: &LabelBox) -> bool {
        self.left < other.right + GAP
            && other.left < self.right + GAP
            && self.top < other.top + other.height
            && other.top < self.top + self.height
    }
}

/// The top of each label, in the order given, so that none overlaps one before it: a label
/// that collides moves one row (its height) at a time, downwards when it asked for the
/// upper half of the plot (`plot_top..plot_bottom`), upwards otherwise, then the other way;
/// a label with no free place in the plot keeps the place it asked for.
pub(super) fn separate(boxes: &[LabelBox], plot_top: i32, plot_bottom: i32) -> Vec<i32> {
    let mut placed: Vec<LabelBox> = Vec::new();
    for &wanted in boxes {
        let fits = |b: &LabelBox| {
            b.top >= plot_top
                && b.top + b.height <= plot_bottom
                && !placed.iter().any(|p| p.overlaps(b))
        };
        let row = wanted.height.max(1);
        let downwards_first = wanted.top - plot_top < plot_bottom - (wanted.top + wanted.height);
        let first = if downwards_first { row } else { -row };
        let rows = ((plot_bottom - plot_top) / row).max(1) + 1;
        let candidates = std::iter::once(wanted.top)
            .chain((1..=rows).map(|i| wanted.top + first * i))
            .chain((1..=rows).map(|i| wanted.top - first * i));
        let top = candidates
            .map(|top| wanted.at(top))
            .find(|b| fits(b))
            .map_or(wanted.top, |b| b.top);
        placed.push(wanted.at(top));
    }
    placed.iter().map(|b| b.top).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(left: i32, right: i32, top: i32) -> LabelBox {
        LabelBox {
            left,
            right,
            top,
            height: 14,
        }
    }

    #[test]
    fn labels_that_would_overlap_move_apart_and_others_stay() {
        // (labels, plot top and bottom, the tops wanted after placement)
        let cases: &[(&[LabelBox], i32, i32, &[i32])] = &[
            // Apart on x: both keep their rows.
            (&[label(0, 50, 10), label(60, 100, 10)], 0, 300, &[10, 10]),
            // The AMD figure's DTLB labels: near the bottom, the second one moves up a row.
            (
                &[label(620, 860, 270), label(700, 900, 270)],
                0,
                300,
                &[270, 256],
            ),
            // Near the top, it moves down.
            (&[label(0, 50, 10), label(20, 80, 12)], 0, 300, &[10, 26]),
            // A third one stacks past both.
            (
                &[label(0, 50, 10), label(20, 80, 10), label(30, 90, 10)],
                0,
                300,
                &[10, 24, 38],
            ),
            // No room in a plot one row high: it keeps its place.
            (&[label(0, 50, 0), label(20, 80, 0)], 0, 14, &[0, 0]),
        ];
        for &(boxes, top, bottom, want) in cases {
            let tops = separate(boxes, top, bottom);
            assert_eq!(tops, want, "{boxes:?}");
        }
    }

    #[test]
    fn no_two_placed_labels_overlap_when_there_is_room() {
        // Twelve labels all asking for one spot in a tall plot.
        let boxes: Vec<LabelBox> = (0..12).map(|i| label(i * 10, i * 10 + 120, 100)).collect();
        let tops = separate(&boxes, 0, 400);
        let placed: Vec<LabelBox> = boxes.iter().zip(&tops).map(|(b, &t)| b.at(t)).collect();
        for (i, a) in placed.iter().enumerate() {
            assert!(a.top >= 0 && a.top + a.height <= 400, "{a:?}");
            for b in &placed[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} and {b:?}");
            }
        }
    }
}
