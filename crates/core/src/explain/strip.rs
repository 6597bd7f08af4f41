//! The strip of sets `stridelab layout` draws under a level: one cell per set, or per group
//! of sets when there are more than `STRIP_MAX_CELLS` (256; the group's busiest set), shaded
//! by its distinct lines from ' ' (none) to '@' (the busiest), 64 cells per row. The shading is
//! relative to the busiest set, so the legend names that count and the ways beside it.

use crate::units::format_count_from_five_digits;

/// Shades of the set strip, from no line to the busiest set.
const SHADES: &[u8] = b" .:-=+*#%@";

/// Cells per row of the strip; more sets than [`STRIP_MAX_CELLS`] share a cell.
const STRIP_ROW: usize = 64;
const STRIP_MAX_CELLS: usize = 256;

/// The strip of one level: a legend saying what a cell and its shades stand for, and the rows
/// of cells (each row's characters are the shades; framing them is the renderer's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetStrip {
    pub legend: String,
    pub rows: Vec<String>,
}

/// One cell per set (or per group of sets, the busiest of the group), shaded by distinct lines
/// from ' ' (none) to '@' (the busiest set), 64 cells per row.
pub fn set_strip(set_lines: &[u64], ways: u64) -> SetStrip {
    let group = set_lines.len().div_ceil(STRIP_MAX_CELLS).max(1);
    let cells: Vec<u64> = set_lines
        .chunks(group)
        .map(|g| g.iter().copied().max().unwrap_or(0))
        .collect();
    let max = cells.iter().copied().max().unwrap_or(0);
    let top = SHADES.len() as u64 - 1;
    let per = if group == 1 {
        "one cell per set".to_string()
    } else {
        format!("one cell per {group} sets")
    };
    let legend = format!(
        "({per}; ' ' no line .. '@' {}; {ways} ways)",
        if max == 1 {
            "1 line".to_string()
        } else {
            format!("{} lines", format_count_from_five_digits(max))
        }
    );
    let rows = cells
        .chunks(STRIP_ROW)
        .map(|row| {
            row.iter()
                .map(|&n| {
                    let shade = if n == 0 || max == 0 {
                        0
                    } else {
                        (n * top).div_ceil(max).clamp(1, top)
                    };
                    SHADES[shade as usize] as char
                })
                .collect()
        })
        .collect();
    SetStrip { legend, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_group_sets_and_shade_relative_to_the_busiest() {
        // 4 sets: one cell each; 512 sets: groups of 2 sets, each cell its busier set.
        let strip = set_strip(&[0, 1, 4, 8], 8);
        assert_eq!(
            strip.legend,
            "(one cell per set; ' ' no line .. '@' 8 lines; 8 ways)"
        );
        assert_eq!(strip.rows, [" :+@"]);
        let mut many = vec![0u64; 512];
        many[511] = 3;
        let strip = set_strip(&many, 4);
        assert!(strip.legend.contains("one cell per 2 sets"), "{strip:?}");
        assert_eq!(strip.rows.len(), 256 / 64);
        assert!(strip.rows[3].ends_with('@'), "{strip:?}");
    }
}
