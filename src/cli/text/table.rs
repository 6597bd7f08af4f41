//! Fixed-width text tables (laid out by comfy-table) and wrapped paragraphs for the terminal:
//! each column as wide as its widest cell (header included), two spaces apart, numbers
//! right-aligned, no trailing blanks.
//! Width is counted in characters: every symbol the tables print (µ, ×, ±, ≥, —) takes one
//! column.

#![forbid(unsafe_code)]

/// Which side of its column a cell keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A table built row by row, laid out when rendered.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextTable {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

const GAP: &str = "  ";

/// What a cell shows when it has no value.
pub(crate) const MISSING: &str = "-";

/// A column before layout: header, alignment and one cell per row.
#[derive(Clone)]
pub(crate) struct Column {
    pub(crate) header: String,
    align: Align,
    cells: Vec<String>,
}

impl Column {
    pub(crate) fn new(header: &str, align: Align, cells: Vec<String>) -> Self {
        Self {
            header: header.into(),
            align,
            cells,
        }
    }

    /// Whether any cell says something (columns of dashes are left out).
    pub(crate) fn has_values(&self) -> bool {
        self.cells.iter().any(|c| !c.is_empty() && c != MISSING)
    }
}

/// The table of `columns`, side by side.
pub(crate) fn table(columns: &[Column]) -> TextTable {
    let heads: Vec<(&str, Align)> = columns
        .iter()
        .map(|c| (c.header.as_str(), c.align))
        .collect();
    let mut t = TextTable::new(&heads);
    let rows = columns.first().map_or(0, |c| c.cells.len());
    for row in 0..rows {
        t.push(columns.iter().map(|c| c.cells[row].clone()).collect());
    }
    t
}

fn width(text: &str) -> usize {
    text.chars().count()
}

impl TextTable {
    /// A table with these columns.
    pub(crate) fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            headers: columns.iter().map(|(h, _)| h.to_string()).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are blank, extra ones dropped).
    pub(crate) fn push(&mut self, mut cells: Vec<String>) {
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    fn column_widths(&self) -> Vec<usize> {
        (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|row| width(&row[c]))
                    .chain([width(&self.headers[c])])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The widest line [`render`](Self::render) writes, indent included.
    pub(crate) fn width(&self, indent: &str) -> usize {
        let widths = self.column_widths();
        width(indent) + widths.iter().sum::<usize>() + GAP.len() * widths.len().saturating_sub(1)
    }

    /// The header and the rows, each line starting with `indent` (laid out by comfy-table:
    /// no borders, [`GAP`] between columns, trailing blanks trimmed).
    pub(crate) fn render(&self, indent: &str) -> String {
        use comfy_table::{CellAlignment, Table, presets::NOTHING};
        let mut table = Table::new();
        table.load_preset(NOTHING);
        // The header as a plain first row: a comfy-table header adds a separator line.
        table.add_row(self.headers.clone());
        for row in &self.rows {
            table.add_row(row.clone());
        }
        let last = self.aligns.len().saturating_sub(1);
        for (c, align) in self.aligns.iter().enumerate() {
            if let Some(column) = table.column_mut(c) {
                column.set_padding((0, if c < last { GAP.len() as u16 } else { 0 }));
                column.set_cell_alignment(match align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
            }
        }
        let mut out = String::new();
        for line in table.lines() {
            out.push_str(format!("{indent}{line}").trim_end());
            out.push('\n');
        }
        out
    }
}

/// `text` broken at spaces into lines of at most `max` characters (a longer word stays whole),
/// continuation lines starting with `indent`.
pub(crate) fn wrap(text: &str, max: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && width(&line) + 1 + width(word) > max {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
        } else if !line.is_empty() && line != indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_cell_and_numbers_align_right() {
        let mut table = TextTable::new(&[("point", Align::Left), ("time", Align::Right)]);
        table.push(vec!["stride=511".into(), "1.01 µs".into()]);
        table.push(vec!["s=1".into(), "858 ns".into()]);
        let text = table.render("  ");
        assert_eq!(
            text,
            "  point          time\n  stride=511  1.01 µs\n  s=1          858 ns\n"
        );
        assert_eq!(table.width("  "), 21);
        assert!(text.lines().all(|l| width(l) <= 21));
    }

    #[test]
    fn paragraphs_wrap_at_spaces_within_the_width() {
        let text = wrap("one two three four five six", 10, "  ");
        assert_eq!(text, "one two\n  three\n  four\n  five six\n");
        assert!(text.lines().all(|l| width(l) <= 10));
        assert_eq!(
            wrap("averyveryverylongword x", 5, ""),
            "averyveryverylongword\nx\n"
        );
    }
}
