//! How much of its long lists `stridelab layout --json` prints. The view's values (one per
//! element) and each level's lines per set (one per set) run to millions of entries — a
//! (32, 64, 56, 56) view has 6,422,528 values, about 50 MB of JSON — so by default each list
//! shows its first [`DEFAULT_SHOWN`] entries beside its total and a `truncated` flag. `--all`
//! lists them in full, unless the output, estimated from the counts before anything is listed,
//! would exceed [`MAX_FULL_BYTES`].

use serde::Serialize;

use crate::explain::levels::LevelEntry;
use crate::layout::Layout;
use crate::units::format_bytes_tenths;

/// Entries each list shows by default.
pub const DEFAULT_SHOWN: usize = 4096;

/// Most bytes of lists `--all` may print: a pipe or an editor still takes it.
pub const MAX_FULL_BYTES: u64 = 64 << 20;

/// How many entries of each list to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// The first n of each.
    First(usize),
    /// Every entry.
    All,
}

impl Listing {
    /// Entries shown of a list of `total`.
    pub fn shown(self, total: usize) -> usize {
        match self {
            Listing::First(n) => n.min(total),
            Listing::All => total,
        }
    }
}

/// The full lists would be larger than [`MAX_FULL_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "listing everything would print about {} of JSON ({values} values and {set_counts} \
     per-set line counts), more than the {} that --all allows; without --all each list shows \
     its first {DEFAULT_SHOWN} entries",
    format_bytes_tenths(*bytes),
    format_bytes_tenths(MAX_FULL_BYTES)
)]
pub struct ListingTooLarge {
    pub bytes: u64,
    pub values: u64,
    pub set_counts: u64,
}

/// The view's values as `--json` lists them: the first ones in logical C order, how many
/// there are, and whether some were left out.
#[derive(Debug, Clone, Serialize)]
pub struct ListedValues<T> {
    pub values: Vec<T>,
    pub values_total: u64,
    pub values_truncated: bool,
}

/// The values `layout` takes from `storage`, under `listing`, without collecting the ones left out.
pub fn list_values<T: Copy>(layout: &Layout, storage: &[T], listing: Listing) -> ListedValues<T> {
    let total = layout.numel();
    let shown = listing.shown(total);
    ListedValues {
        values: layout.offsets().take(shown).map(|o| storage[o]).collect(),
        values_total: total as u64,
        values_truncated: shown < total,
    }
}

/// Cuts every explained level's `set_lines` to `listing`, saying so in the level.
pub fn cap_set_lines(caches: &mut [LevelEntry], listing: Listing) {
    for entry in caches {
        if let LevelEntry::Explained(report) = entry {
            let cache = &mut report.cache;
            if let Some(lines) = cache.set_lines.as_mut() {
                let shown = listing.shown(lines.len());
                cache.set_lines_truncated = shown < lines.len();
                lines.truncate(shown);
            }
        }
    }
}

/// Refuses `--all` when listing every value (`values` of them, none above `max_value`) and
/// every set's count of `caches` would print more than [`MAX_FULL_BYTES`]: each entry takes
/// its digits and a comma at most.
pub fn check_all(
    values: u64,
    max_value: u64,
    caches: &[LevelEntry],
) -> Result<(), ListingTooLarge> {
    let entry_bytes = |max: u64| u64::from(max.checked_ilog10().unwrap_or(0)) + 2;
    let mut bytes = values.saturating_mul(entry_bytes(max_value));
    let mut set_counts = 0u64;
    for report in caches.iter().filter_map(LevelEntry::report) {
        if let Some(lines) = &report.cache.set_lines {
            let most = report.cache.max_lines_per_set.unwrap_or(0);
            set_counts += lines.len() as u64;
            bytes = bytes.saturating_add((lines.len() as u64).saturating_mul(entry_bytes(most)));
        }
    }
    if bytes > MAX_FULL_BYTES {
        return Err(ListingTooLarge {
            bytes,
            values,
            set_counts,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::cache::tests::steps_of;

    #[test]
    fn values_are_cut_to_the_listing_and_say_so() {
        let (_, layout) = steps_of("arange(24).view(2,3,4).T");
        let storage: Vec<i64> = (0..24).collect();
        // (listing, values shown, truncated)
        let table: [(Listing, &[i64], bool); 3] = [
            (Listing::First(4), &[0, 12, 4, 16], true),
            (Listing::First(100), &[0, 12, 4, 16, 8, 20], false),
            (Listing::All, &[0, 12, 4, 16, 8, 20], false),
        ];
        for (listing, head, truncated) in table {
            let listed = list_values(&layout, &storage, listing);
            assert_eq!(listed.values_total, 24);
            assert_eq!(listed.values_truncated, truncated, "{listing:?}");
            assert_eq!(&listed.values[..head.len().min(listed.values.len())], head);
            let expected_len = if truncated { head.len() } else { 24 };
            assert_eq!(listed.values.len(), expected_len, "{listing:?}");
        }
    }

    #[test]
    fn all_is_refused_beyond_the_bound_from_the_counts_alone() {
        // 6,422,528 values below 10^7: 8 bytes each, 51 MB: allowed. 16 Mi values of up to 8
        // digits: 9 bytes each, 151 MB: refused, with the numbers in the message.
        assert_eq!(check_all(6_422_528, 6_422_527, &[]), Ok(()));
        let err = check_all(1 << 24, (1 << 24) - 1, &[]).unwrap_err();
        assert_eq!(err.bytes, (1 << 24) * 9);
        assert!(err.to_string().contains("16777216 values"), "{err}");
        assert!(err.to_string().contains("more than the 64.0 MiB"), "{err}");
        // A single digit takes two bytes with its comma; zero too.
        assert_eq!(check_all(0, 0, &[]), Ok(()));
    }
}
