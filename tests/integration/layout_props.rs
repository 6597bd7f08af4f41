//! Property tests of the layout model against a brute-force reference.
//!
//! The reference keeps a view as the explicit table of storage offsets of its elements in
//! logical C order and implements every op by mapping indices (no strides involved). Random
//! layouts and random op chains must agree with it: same shape, same offsets, same accept /
//! reject decision; contiguity and `view` must agree with brute-force checks; copies must be
//! exactly what the copy engine produces.

use std::sync::Arc;

use proptest::prelude::*;
use stridelab::kernels::eval as expr;
use stridelab::kernels::tensor::Tensor;
use stridelab::layout::{IndexItem, Layout};

// ---------------------------------------------------------------- a tiny deterministic RNG

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `low..=high`.
    fn range(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next() % ((high - low + 1) as u64)) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

// ---------------------------------------------------------------- the brute-force reference

/// All indices of `shape` in C order.
fn c_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut v = prefix.clone();
                    v.push(i);
                    v
                })
            })
            .collect();
    }
    out
}

fn linear(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// A view as the explicit table of its elements' storage offsets, in C order.
#[derive(Debug, Clone, PartialEq)]
struct Dense {
    shape: Vec<usize>,
    offsets: Vec<i128>,
}

impl Dense {
    fn from_strides(shape: &[usize], strides: &[isize], offset: usize) -> Dense {
        let offsets = c_indices(shape)
            .iter()
            .map(|idx| {
                idx.iter()
                    .zip(strides)
                    .fold(offset as i128, |acc, (&i, &s)| acc + i as i128 * s as i128)
            })
            .collect();
        Dense {
            shape: shape.to_vec(),
            offsets,
        }
    }

    fn remap(&self, shape: Vec<usize>, old_index: impl Fn(&[usize]) -> Vec<usize>) -> Dense {
        let offsets = c_indices(&shape)
            .iter()
            .map(|idx| self.offsets[linear(&self.shape, &old_index(idx))])
            .collect();
        Dense { shape, offsets }
    }

    fn numel(&self) -> usize {
        self.offsets.len()
    }
}

fn norm_dim(dim: i64, ndim: usize) -> Option<usize> {
    let d = if dim < 0 { dim + ndim as i64 } else { dim };
    (0..ndim as i64).contains(&d).then_some(d as usize)
}

fn norm_index(i: i64, n: usize) -> Option<usize> {
    let j = if i < 0 { i + n as i64 } else { i };
    (0..n as i64).contains(&j).then_some(j as usize)
}

/// Positions a Python slice selects, by filtering `0..n` (no length formula).
fn slice_positions(
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
    n: usize,
) -> Option<Vec<usize>> {
    let n = n as i64;
    let step = step.unwrap_or(1);
    let wrap = |v: i64| if v < 0 { v + n } else { v };
    if step == 0 {
        return None;
    }
    if step > 0 {
        let s = start.map(wrap).unwrap_or(0).max(0);
        let e = stop.map(wrap).unwrap_or(n);
        Some(
            (0..n)
                .filter(|&p| p >= s && p < e && (p - s) % step == 0)
                .map(|p| p as usize)
                .collect(),
        )
    } else {
        let s = start.map(wrap).unwrap_or(n - 1).min(n - 1);
        let e = stop.map(wrap).unwrap_or(-1);
        Some(
            (0..n)
                .rev()
                .filter(|&p| p <= s && p > e && (s - p) % (-step) == 0)
                .map(|p| p as usize)
                .collect(),
        )
    }
}

#[derive(Debug, Clone)]
enum Op {
    Transpose(i64, i64),
    Permute(Vec<i64>),
    T,
    Select(i64, i64),
    Narrow(i64, i64, i64),
    Index(Vec<IndexItem>),
    Diagonal(i64, i64, i64),
    Squeeze,
    SqueezeDim(i64),
    Unsqueeze(i64),
    Expand(Vec<i64>),
    Flip(Vec<i64>),
    View(Vec<i64>),
}

fn infer(requested: &[i64], numel: usize) -> Option<Vec<usize>> {
    if requested.iter().filter(|&&n| n == -1).count() > 1 || requested.iter().any(|&n| n < -1) {
        return None;
    }
    let known: usize = requested
        .iter()
        .filter(|&&n| n >= 0)
        .map(|&n| n as usize)
        .product();
    let mut shape: Vec<usize> = requested.iter().map(|&n| n.max(0) as usize).collect();
    if let Some(k) = requested.iter().position(|&n| n == -1) {
        if known == 0 || !numel.is_multiple_of(known) {
            return None;
        }
        shape[k] = numel / known;
    } else if known != numel {
        return None;
    }
    Some(shape)
}

/// Strides reproducing `dense`'s offsets under `shape`, if any exist (brute force).
fn brute_view_strides(dense: &Dense, shape: &[usize]) -> Option<Vec<i128>> {
    if dense.numel() == 0 {
        return Some(vec![0; shape.len()]);
    }
    let base = dense.offsets[0];
    let strides: Vec<i128> = (0..shape.len())
        .map(|k| {
            if shape[k] > 1 {
                let mut unit = vec![0; shape.len()];
                unit[k] = 1;
                dense.offsets[linear(shape, &unit)] - base
            } else {
                0
            }
        })
        .collect();
    let reproduces = c_indices(shape).iter().enumerate().all(|(pos, idx)| {
        let o = idx
            .iter()
            .zip(&strides)
            .fold(base, |acc, (&i, &s)| acc + i as i128 * s);
        o == dense.offsets[pos]
    });
    reproduces.then_some(strides)
}

fn reference(dense: &Dense, op: &Op) -> Option<Dense> {
    let shape = &dense.shape;
    let ndim = shape.len();
    match op {
        Op::Transpose(a, b) => {
            if ndim == 0 && [*a, *b].iter().all(|d| matches!(d, 0 | -1)) {
                return Some(dense.clone());
            }
            let (a, b) = (norm_dim(*a, ndim)?, norm_dim(*b, ndim)?);
            let mut new_shape = shape.clone();
            new_shape.swap(a, b);
            Some(dense.remap(new_shape, |idx| {
                let mut old = idx.to_vec();
                old.swap(a, b);
                old
            }))
        }
        Op::Permute(dims) => {
            if dims.len() != ndim {
                return None;
            }
            let p: Vec<usize> = dims
                .iter()
                .map(|&d| norm_dim(d, ndim))
                .collect::<Option<_>>()?;
            let mut sorted = p.clone();
            sorted.sort();
            sorted.dedup();
            if sorted.len() != ndim {
                return None;
            }
            let new_shape = p.iter().map(|&d| shape[d]).collect();
            Some(dense.remap(new_shape, |idx| {
                let mut old = vec![0; ndim];
                for (k, &d) in p.iter().enumerate() {
                    old[d] = idx[k];
                }
                old
            }))
        }
        Op::T => {
            let new_shape = shape.iter().rev().copied().collect();
            Some(dense.remap(new_shape, |idx| idx.iter().rev().copied().collect()))
        }
        Op::Select(d, i) => {
            let d = norm_dim(*d, ndim)?;
            let i = norm_index(*i, shape[d])?;
            let mut new_shape = shape.clone();
            new_shape.remove(d);
            Some(dense.remap(new_shape, |idx| {
                let mut old = idx.to_vec();
                old.insert(d, i);
                old
            }))
        }
        Op::Narrow(d, start, len) => {
            let d = norm_dim(*d, ndim)?;
            let n = shape[d] as i64;
            let s = if *start < 0 { start + n } else { *start };
            if *len < 0 || s < 0 || s > n || s + len > n {
                return None;
            }
            let mut new_shape = shape.clone();
            new_shape[d] = *len as usize;
            Some(dense.remap(new_shape, |idx| {
                let mut old = idx.to_vec();
                old[d] += s as usize;
                old
            }))
        }
        Op::Index(items) => {
            if items
                .iter()
                .filter(|i| matches!(i, IndexItem::Ellipsis))
                .count()
                > 1
            {
                return None;
            }
            let consuming = items
                .iter()
                .filter(|i| matches!(i, IndexItem::Int(_) | IndexItem::Slice { .. }))
                .count();
            if consuming > ndim {
                return None;
            }
            let full = IndexItem::Slice {
                start: None,
                stop: None,
                step: None,
            };
            let mut expanded = vec![];
            for &item in items {
                if item == IndexItem::Ellipsis {
                    expanded.extend(vec![full; ndim - consuming]);
                } else {
                    expanded.push(item);
                }
            }
            if !items.contains(&IndexItem::Ellipsis) {
                expanded.extend(vec![full; ndim - consuming]);
            }
            // Per output dim: which input dim and which positions (None = new axis).
            enum Out {
                Fixed(usize, usize),
                Positions(usize, Vec<usize>),
                New,
            }
            let mut plan = vec![];
            let mut d = 0;
            for item in expanded {
                match item {
                    IndexItem::Int(i) => {
                        plan.push(Out::Fixed(d, norm_index(i, shape[d])?));
                        d += 1;
                    }
                    IndexItem::Slice { start, stop, step } => {
                        plan.push(Out::Positions(
                            d,
                            slice_positions(start, stop, step, shape[d])?,
                        ));
                        d += 1;
                    }
                    IndexItem::NewAxis => plan.push(Out::New),
                    IndexItem::Ellipsis => unreachable!(),
                }
            }
            let new_shape: Vec<usize> = plan
                .iter()
                .filter_map(|o| match o {
                    Out::Fixed(..) => None,
                    Out::Positions(_, p) => Some(p.len()),
                    Out::New => Some(1),
                })
                .collect();
            Some(dense.remap(new_shape, |idx| {
                let mut old = vec![0; ndim];
                let mut k = 0;
                for o in &plan {
                    match o {
                        Out::Fixed(d, i) => old[*d] = *i,
                        Out::Positions(d, p) => {
                            old[*d] = p[idx[k]];
                            k += 1;
                        }
                        Out::New => k += 1,
                    }
                }
                old
            }))
        }
        Op::Diagonal(offset, d1, d2) => {
            let (a, b) = (norm_dim(*d1, ndim)?, norm_dim(*d2, ndim)?);
            if a == b {
                return None;
            }
            let (r0, c0) = (
                (-offset).max(0) as usize,
                offset.max(&0).unsigned_abs() as usize,
            );
            let mut len = 0;
            while r0 + len < shape[a] && c0 + len < shape[b] {
                len += 1;
            }
            let others: Vec<usize> = (0..ndim).filter(|&d| d != a && d != b).collect();
            let mut new_shape: Vec<usize> = others.iter().map(|&d| shape[d]).collect();
            new_shape.push(len);
            Some(dense.remap(new_shape, |idx| {
                let mut old = vec![0; ndim];
                for (k, &d) in others.iter().enumerate() {
                    old[d] = idx[k];
                }
                let k = idx[idx.len() - 1];
                old[a] = r0 + k;
                old[b] = c0 + k;
                old
            }))
        }
        Op::Squeeze => Some(Dense {
            shape: shape.iter().copied().filter(|&n| n != 1).collect(),
            offsets: dense.offsets.clone(),
        }),
        Op::SqueezeDim(d) => {
            if ndim == 0 && matches!(d, 0 | -1) {
                return Some(dense.clone());
            }
            let d = norm_dim(*d, ndim)?;
            let mut new_shape = shape.clone();
            if new_shape[d] == 1 {
                new_shape.remove(d);
            }
            Some(Dense {
                shape: new_shape,
                offsets: dense.offsets.clone(),
            })
        }
        Op::Unsqueeze(d) => {
            let d = norm_dim(*d, ndim + 1)?;
            let mut new_shape = shape.clone();
            new_shape.insert(d, 1);
            Some(Dense {
                shape: new_shape,
                offsets: dense.offsets.clone(),
            })
        }
        Op::Expand(sizes) => {
            if sizes.len() < ndim {
                return None;
            }
            let lead = sizes.len() - ndim;
            let mut new_shape = vec![];
            let mut broadcast = vec![];
            for (k, &s) in sizes.iter().enumerate() {
                if s < -1 {
                    return None;
                }
                if k < lead {
                    if s == -1 {
                        return None;
                    }
                    new_shape.push(s as usize);
                    continue;
                }
                let old = shape[k - lead];
                if s == -1 || s as usize == old {
                    new_shape.push(old);
                    broadcast.push(false);
                } else if old == 1 {
                    new_shape.push(s as usize);
                    broadcast.push(true);
                } else {
                    return None;
                }
            }
            Some(dense.remap(new_shape, |idx| {
                idx[lead..]
                    .iter()
                    .zip(&broadcast)
                    .map(|(&i, &b)| if b { 0 } else { i })
                    .collect()
            }))
        }
        Op::Flip(dims) => {
            let targets: Vec<usize> = if dims.is_empty() {
                (0..ndim).collect()
            } else {
                dims.iter()
                    .map(|&d| norm_dim(d, ndim))
                    .collect::<Option<_>>()?
            };
            let mut unique = targets.clone();
            unique.sort();
            unique.dedup();
            if unique.len() != targets.len() {
                return None;
            }
            Some(dense.remap(shape.clone(), |idx| {
                let mut old = idx.to_vec();
                for &d in &targets {
                    old[d] = shape[d] - 1 - idx[d];
                }
                old
            }))
        }
        Op::View(requested) => {
            let new_shape = infer(requested, dense.numel())?;
            brute_view_strides(dense, &new_shape)?;
            Some(Dense {
                shape: new_shape,
                offsets: dense.offsets.clone(),
            })
        }
    }
}

fn apply(layout: &Layout, op: &Op) -> Result<Layout, stridelab::layout::LayoutError> {
    match op {
        Op::Transpose(a, b) => layout.transpose(*a, *b),
        Op::Permute(d) => layout.permute(d),
        Op::T => layout.reversed_dims(),
        Op::Select(d, i) => layout.select(*d, *i),
        Op::Narrow(d, s, l) => layout.narrow(*d, *s, *l),
        Op::Index(items) => layout.index(items),
        Op::Diagonal(o, a, b) => layout.diagonal(*o, *a, *b),
        Op::Squeeze => layout.squeeze(),
        Op::SqueezeDim(d) => layout.squeeze_dim(*d),
        Op::Unsqueeze(d) => layout.unsqueeze(*d),
        Op::Expand(s) => layout.expand(s),
        Op::Flip(d) => layout.flip(d),
        Op::View(s) => layout.view(s),
    }
}

// ---------------------------------------------------------------- random layouts and ops

/// A random (possibly invalid) layout description: shape, strides, offset, storage length.
fn random_parts(rng: &mut Rng) -> (Vec<usize>, Vec<isize>, usize, usize) {
    let ndim = if rng.chance(5) {
        0
    } else {
        rng.range(1, 4) as usize
    };
    let shape: Vec<usize> = (0..ndim)
        .map(|_| {
            if rng.chance(3) {
                0
            } else {
                rng.range(1, 5) as usize
            }
        })
        .collect();
    let strides: Vec<isize> = (0..ndim).map(|_| rng.range(-7, 7) as isize).collect();
    let low: i64 = shape
        .iter()
        .zip(&strides)
        .map(|(&n, &s)| (n.max(1) as i64 - 1) * (s as i64).min(0))
        .sum();
    let high: i64 = shape
        .iter()
        .zip(&strides)
        .map(|(&n, &s)| (n.max(1) as i64 - 1) * (s as i64).max(0))
        .sum();
    // Mostly valid: offset lifts the lowest index to >= 0 and the storage covers the highest.
    let offset = (-low + rng.range(-1, 3)).max(0) as usize;
    let storage = (offset as i64 + high + rng.range(0, 4)).max(0) as usize;
    (shape, strides, offset, storage)
}

fn random_layout(rng: &mut Rng) -> Layout {
    loop {
        let (shape, strides, offset, storage) = random_parts(rng);
        if let Ok(l) = Layout::new(shape, strides, offset, storage) {
            return l;
        }
    }
}

fn random_dim(rng: &mut Rng, ndim: usize) -> i64 {
    let n = ndim as i64;
    if rng.chance(90) && n > 0 {
        rng.range(-n, n - 1)
    } else {
        rng.range(-n - 1, n)
    }
}

fn random_factors(rng: &mut Rng, numel: usize) -> Vec<i64> {
    let mut factors = vec![];
    let mut rest = numel;
    let mut p = 2;
    while rest > 1 {
        while rest.is_multiple_of(p) {
            factors.push(p as i64);
            rest /= p;
        }
        p += 1;
    }
    let mut shape: Vec<i64> = vec![];
    for f in factors {
        match shape.last_mut() {
            Some(last) if rng.chance(50) => *last *= f,
            _ => shape.push(f),
        }
    }
    if numel == 0 {
        shape = (0..rng.range(1, 3)).map(|_| rng.range(0, 3)).collect();
        if !shape.contains(&0) {
            shape.push(0);
        }
    }
    // Shuffle the merged factors' order a little: only adjacent swaps, keeps it plausible.
    if shape.len() > 1 && rng.chance(30) {
        let k = rng.range(0, shape.len() as i64 - 2) as usize;
        shape.swap(k, k + 1);
    }
    for _ in 0..rng.range(0, 2) {
        let k = rng.range(0, shape.len() as i64) as usize;
        shape.insert(k, 1);
    }
    if !shape.is_empty() && rng.chance(30) {
        let k = rng.range(0, shape.len() as i64 - 1) as usize;
        shape[k] = -1;
    }
    if rng.chance(5) {
        shape.push(rng.range(-2, 5));
    }
    shape
}

fn random_slice_bound(rng: &mut Rng, n: usize) -> Option<i64> {
    let n = n as i64;
    rng.chance(50).then(|| rng.range(-n - 1, n + 1))
}

fn random_op(rng: &mut Rng, layout: &Layout) -> Op {
    let ndim = layout.ndim();
    let shape = layout.shape();
    let size_of = |d: i64| norm_dim(d, ndim).map_or(3, |d| shape[d]) as i64;
    match rng.range(0, 12) {
        0 => Op::Transpose(random_dim(rng, ndim), random_dim(rng, ndim)),
        1 => {
            let mut dims: Vec<i64> = (0..ndim as i64).collect();
            for k in (1..dims.len()).rev() {
                let j = rng.range(0, k as i64) as usize;
                dims.swap(k, j);
            }
            if rng.chance(10) && !dims.is_empty() {
                dims[0] = random_dim(rng, ndim);
            }
            Op::Permute(dims)
        }
        2 => Op::T,
        3 => {
            let d = random_dim(rng, ndim);
            let n = size_of(d);
            Op::Select(d, rng.range(-n - 1, n))
        }
        4 => {
            let d = random_dim(rng, ndim);
            let n = size_of(d);
            let start = rng.range(-n, n);
            Op::Narrow(d, start, rng.range(-1, n))
        }
        5 | 6 => {
            let mut items = vec![];
            let mut d = 0;
            let count = rng.range(0, ndim as i64 + 1);
            let mut ellipsis = false;
            for _ in 0..count {
                let n = shape.get(d).copied().unwrap_or(2);
                let item = match rng.range(0, 9) {
                    0 | 1 => IndexItem::Int(rng.range(-(n as i64) - 1, n as i64)),
                    2 => IndexItem::NewAxis,
                    3 if !ellipsis || rng.chance(10) => {
                        ellipsis = true;
                        IndexItem::Ellipsis
                    }
                    _ => IndexItem::Slice {
                        start: random_slice_bound(rng, n),
                        stop: random_slice_bound(rng, n),
                        step: rng.chance(70).then(|| {
                            let s = rng.range(-3, 3);
                            if s == 0 && rng.chance(80) { -1 } else { s }
                        }),
                    },
                };
                if matches!(item, IndexItem::Int(_) | IndexItem::Slice { .. }) {
                    d += 1;
                }
                items.push(item);
            }
            if items.is_empty() {
                items.push(IndexItem::Ellipsis);
            }
            Op::Index(items)
        }
        7 => Op::Diagonal(
            rng.range(-3, 3),
            random_dim(rng, ndim),
            random_dim(rng, ndim),
        ),
        8 => match rng.range(0, 2) {
            0 => Op::Squeeze,
            1 => Op::SqueezeDim(random_dim(rng, ndim)),
            _ => Op::Unsqueeze(random_dim(rng, ndim + 1)),
        },
        9 => {
            let mut sizes: Vec<i64> = shape
                .iter()
                .map(|&n| match (n, rng.range(0, 3)) {
                    (1, 0) => rng.range(0, 3),
                    (_, 1) => -1,
                    (_, 2) if rng.chance(10) => n as i64 + 1,
                    _ => n as i64,
                })
                .collect();
            for _ in 0..rng.range(0, 1) {
                let low = if rng.chance(5) { -1 } else { 0 };
                sizes.insert(0, rng.range(low, 3));
            }
            Op::Expand(sizes)
        }
        10 => {
            let count = rng.range(0, ndim as i64);
            Op::Flip((0..count).map(|_| random_dim(rng, ndim)).collect())
        }
        _ => Op::View(random_factors(rng, layout.numel())),
    }
}

// ---------------------------------------------------------------- checks

fn brute_c_contiguous(dense: &Dense) -> bool {
    dense.numel() == 0 || dense.offsets.windows(2).all(|w| w[1] == w[0] + 1)
}

fn brute_f_contiguous(dense: &Dense) -> bool {
    let reversed: Vec<usize> = dense.shape.iter().rev().copied().collect();
    let f_order = dense.remap(reversed, |idx| idx.iter().rev().copied().collect());
    brute_c_contiguous(&f_order)
}

fn check_layout_against(layout: &Layout, dense: &Dense, context: &str) {
    assert_eq!(layout.shape(), &dense.shape[..], "{context}");
    let offsets: Vec<usize> = layout.offsets().collect();
    assert_eq!(offsets.len(), dense.numel(), "{context}");
    for (&o, &r) in offsets.iter().zip(&dense.offsets) {
        assert_eq!(o as i128, r, "{context}");
        assert!(
            o < layout.storage_len(),
            "offset {o} out of bounds: {context}"
        );
    }
    assert_eq!(
        layout.is_c_contiguous(),
        brute_c_contiguous(dense),
        "C: {context}"
    );
    assert_eq!(
        layout.is_f_contiguous(),
        brute_f_contiguous(dense),
        "F: {context}"
    );
    if layout.is_non_overlapping() {
        let mut sorted = offsets.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            offsets.len(),
            "claimed non-overlapping: {context}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// `Layout::new` accepts exactly the layouts whose every element is inside the storage.
    #[test]
    fn validation_equals_brute_force_bounds(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let (shape, strides, offset, storage) = random_parts(&mut rng);
        let dense = Dense::from_strides(&shape, &strides, offset);
        let in_bounds = if dense.numel() == 0 {
            offset <= storage
        } else {
            dense.offsets.iter().all(|&o| (0..storage as i128).contains(&o))
        };
        let built = Layout::new(shape.clone(), strides.clone(), offset, storage);
        prop_assert_eq!(built.is_ok(), in_bounds, "{:?} {:?} {} {}", shape, strides, offset, storage);
        if let Ok(layout) = built {
            check_layout_against(&layout, &dense, "fresh layout");
        }
    }

    /// Random op chains agree with the index-mapping reference, op by op.
    #[test]
    fn op_chains_equal_the_reference(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut layout = random_layout(&mut rng);
        let mut dense = Dense::from_strides(layout.shape(), layout.strides(), layout.offset());
        let mut chain = format!("{layout:?}");
        for _ in 0..rng.range(1, 6) {
            let op = random_op(&mut rng, &layout);
            chain.push_str(&format!(" -> {op:?}"));
            let expected = reference(&dense, &op);
            match apply(&layout, &op) {
                Ok(next) => {
                    let Some(expected) = expected else {
                        panic!("accepted but the reference rejects: {chain}");
                    };
                    check_layout_against(&next, &expected, &chain);
                    layout = next;
                    dense = expected;
                }
                Err(err) => {
                    prop_assert!(expected.is_none(), "rejected ({}) but the reference accepts: {}", err, chain);
                    // Rejections are typed and explained.
                    prop_assert!(!err.to_string().is_empty());
                }
            }
        }
    }

    /// `view` succeeds exactly when brute force finds strides reproducing the offsets, and
    /// the strides it picks agree with them on every dim of size > 1.
    #[test]
    fn view_iff_strides_exist(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut layout = random_layout(&mut rng);
        // A couple of random view ops first, to get transposed/sliced/broadcast inputs.
        for _ in 0..rng.range(0, 3) {
            let op = random_op(&mut rng, &layout);
            if let Ok(next) = apply(&layout, &op) {
                layout = next;
            }
        }
        let dense = Dense::from_strides(layout.shape(), layout.strides(), layout.offset());
        let requested = random_factors(&mut rng, layout.numel());
        let Some(new_shape) = infer(&requested, layout.numel()) else {
            prop_assert!(layout.view(&requested).is_err());
            return Ok(());
        };
        let brute = brute_view_strides(&dense, &new_shape);
        let viewed = layout.view(&requested);
        prop_assert_eq!(viewed.is_ok(), brute.is_some(), "{:?} view {:?}", layout, requested);
        match viewed {
            Ok(v) => {
                if dense.numel() > 0 {
                    let brute = brute.unwrap();
                    for k in 0..new_shape.len() {
                        if new_shape[k] > 1 {
                            prop_assert_eq!(v.strides()[k] as i128, brute[k]);
                        }
                    }
                }
                prop_assert_eq!(v.offsets().collect::<Vec<_>>(), layout.offsets().collect::<Vec<_>>());
            }
            Err(e) => {
                prop_assert_eq!(e.kind().as_str(), "view_incompatible");
                prop_assert!(e.to_string().contains(".reshape("), "{}", e);
            }
        }
    }

    /// Every copy the model makes is the copy engine's output; views share the storage.
    #[test]
    fn copies_go_through_the_engine(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let layout = random_layout(&mut rng);
        let storage: Arc<[i64]> = (0..layout.storage_len() as i64).map(|v| v * 10 + 7).collect();
        let tensor = Tensor::from_storage(Arc::clone(&storage), layout.clone(), crate::common::planner()).unwrap();

        let mut engine = vec![0i64; layout.numel()];
        stridelab_copy::copy_into_contiguous(&crate::common::planner(), &storage, layout.shape(), layout.strides(), layout.offset(), &mut engine).unwrap();
        prop_assert_eq!(&engine, &tensor.values());

        let copy = tensor.clone_data().unwrap();
        prop_assert!(!copy.shares_storage_with(&tensor));
        prop_assert_eq!(&copy.storage()[..], &engine[..]);
        prop_assert!(copy.layout().is_c_contiguous() && copy.writable());

        let contiguous = tensor.contiguous().unwrap();
        prop_assert_eq!(contiguous.shares_storage_with(&tensor), layout.is_c_contiguous());
        prop_assert_eq!(contiguous.values(), engine.clone());
        if !contiguous.shares_storage_with(&tensor) {
            prop_assert_eq!(&contiguous.storage()[..], &engine[..]);
        }

        let reshaped = tensor.reshape(&[-1]).unwrap();
        prop_assert_eq!(reshaped.shares_storage_with(&tensor), layout.view(&[-1]).is_ok());
        prop_assert_eq!(reshaped.values(), engine.clone());
        if !reshaped.shares_storage_with(&tensor) {
            prop_assert_eq!(&reshaped.storage()[..], &engine[..]);
        }
        // Read-only exactly when the view may alias: never for a copy, always for stride 0.
        let aliases = layout.shape().iter().zip(layout.strides()).any(|(&n, &s)| n > 1 && s == 0);
        if aliases && layout.numel() > 0 {
            prop_assert!(!tensor.writable());
        }
    }

    /// No string makes the EXPR parser or evaluator panic.
    #[test]
    fn random_strings_never_panic(text in "[ -~]{0,40}") {
        let _ = expr::evaluate_as::<i64>(&text, 4096, crate::common::planner());
    }

    /// Nor do small mutations of valid expressions.
    #[test]
    fn mutated_expressions_never_panic(
        base in prop::sample::select(vec![
            "arange(12).view(3,4).T",
            "arange(24).view(2,3,4).permute(2,0,1)[..., ::-2, None, 1]",
            "arange(54).view(6,9).diagonal(offset=-1, dim1=0, dim2=1)",
            "arange(6)[None].expand(3, -1).flip(0, 1).reshape((2, 9))",
            "arange(12).as_strided((3, 4), (1, 3), 0).contiguous().clone()",
            "arange(8).view(2,2,2).narrow(1, 1, 1).squeeze(1).unsqueeze(-1).flatten()",
            "arange(10)[-3:1:-2].select(0, -1)",
            "arange(6).view(2,3).t().transpose(0,1).squeeze()",
        ]),
        edits in prop::collection::vec((any::<u16>(), 0u8..3, prop::sample::select(
            "0123456789-+()[],:.=_ TtNoneviewarangexpd-1\u{e9}\u{1F600}".chars().collect::<Vec<_>>()
        )), 1..6),
    ) {
        let mut chars: Vec<char> = base.chars().collect();
        for (pos, kind, c) in edits {
            let at = pos as usize % (chars.len() + 1);
            match kind {
                0 => chars.insert(at, c),
                1 if at < chars.len() => { chars.remove(at); }
                _ if at < chars.len() => chars[at] = c,
                _ => chars.push(c),
            }
        }
        let text: String = chars.into_iter().collect();
        if let Err(e) = expr::evaluate_as::<i64>(&text, 4096, crate::common::planner()) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

/// Random well-formed chains whose integers include extremes (±i64::MAX, ±2^62, ±2^31):
/// every checked computation must turn into an error, never an overflow panic.
fn random_grammar_expr(rng: &mut Rng) -> String {
    const EXTREMES: [i64; 8] = [
        i64::MAX,
        -i64::MAX,
        1 << 62,
        -(1 << 62),
        1 << 31,
        -(1 << 31),
        (1 << 32) + 1,
        isize::MAX as i64 / 3,
    ];
    let int = |rng: &mut Rng| -> i64 {
        if rng.chance(25) {
            EXTREMES[rng.range(0, EXTREMES.len() as i64 - 1) as usize]
        } else {
            rng.range(-4, 6)
        }
    };
    let mut text = format!("arange({})", rng.range(0, 30));
    for _ in 0..rng.range(1, 6) {
        let method = rng.range(0, 16);
        // Mostly the right number of arguments, so most chains get past argument binding.
        let arity = match method {
            0 | 3 => 2,
            4 => 3,
            6 => 1,
            5 | 11 => rng.range(0, 2),
            _ => rng.range(0, 3),
        };
        let arity = if rng.chance(10) {
            rng.range(0, 4)
        } else {
            arity
        };
        let args: Vec<String> = (0..arity).map(|_| int(rng).to_string()).collect();
        let args = args.join(", ");
        let step = match method {
            0 => format!(".transpose({args})"),
            1 => format!(".permute({args})"),
            2 => ".T".to_string(),
            3 => format!(".select({args})"),
            4 => format!(".narrow({args})"),
            5 => format!(".diagonal({args})"),
            6 => format!(".unsqueeze({args})"),
            7 => format!(".expand({args})"),
            8 => format!(".flip({args})"),
            9 => format!(".view({args})"),
            10 => format!(".reshape({args})"),
            11 => format!(".flatten({args})"),
            12 => {
                let n = rng.range(1, 3);
                let sizes: Vec<String> = (0..n).map(|_| int(rng).to_string()).collect();
                let strides: Vec<String> = (0..n).map(|_| int(rng).to_string()).collect();
                format!(
                    ".as_strided(({},), ({},), {})",
                    sizes.join(", "),
                    strides.join(", "),
                    int(rng)
                )
            }
            13 => format!("[{}:{}:{}]", int(rng), int(rng), int(rng)),
            14 => format!("[{}, None, ...]", int(rng)),
            _ => ".contiguous()".to_string(),
        };
        text.push_str(&step);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn extreme_integers_never_panic(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let text = random_grammar_expr(&mut rng);
        match expr::evaluate_as::<i64>(&text, 4096, crate::common::planner()) {
            Ok(e) => {
                let storage_len = e.storage_len();
                prop_assert!(e.layout().offsets().all(|o| o < storage_len), "{}", text);
            }
            Err(err) => prop_assert!(!err.to_string().is_empty()),
        }
    }
}
