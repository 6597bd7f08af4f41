//! Channels-first (NCHW) vs channels-last (NHWC) 4-D tensors: `channel-sum` and `stencil3x3`
//! (the conversion `to-nhwc` is in `to_nhwc.rs`, on this file's [`Tensor4`]). A tensor of shape (N, C, H, W) stores element (n, c, h, w) at
//! `((n·C + c)·H + h)·W + w` in `nchw` and at `((n·H + h)·W + w)·C + c` in `nhwc`.
//!
//! Access orders (the contract the simulator replays):
//! - `channel-sum n c h w layout dtype`: the per-channel sums over (n, h, w):
//!   for c, for n, for h, for w: load x[layout index]. In `nchw` the (h, w) loops of one
//!   (n, c) are one contiguous run of H·W elements; in `nhwc` they are one run of H·W elements
//!   C apart. Within a channel the k-th element of each run goes to accumulator `k mod 8`; the
//!   accumulators restart at every channel. Elements are f32 (default; 4-byte accesses at
//!   `base + 4·i`, see `access`) or f64. Checksum: Σ_c (c mod 7 + 1)·sum_c, so a value summed
//!   into the wrong channel changes it.
//! - `stencil3x3 n c h w layout`: a 3×3 depthwise box stencil, **valid-only** (outputs with
//!   1 ≤ h ≤ H−2 and 1 ≤ w ≤ W−2; the border of the output is never written). For each output
//!   in the layout's storage order (`nchw`: for n, c, h, w; `nhwc`: for n, h, w, c): for
//!   dh in −1..=1, for dw in −1..=1: load in[(n, c, h+dh, w+dw)]; then store the sum to
//!   out[(n, c, h, w)] in buffer 1 (same layout). Weights are all 1 and live in registers.
//!   Checksum: the sum of every stored output plus the sampled read-back of buffer 1
//!   (`common::sampled_sum`), so both the values and their places are checked.

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem, Strided};
use crate::kernels::common::{
    ACCUMULATORS, cell_value, check_indices, checked_elements, filled_buffer, fold, invalid,
    sampled_sum, size_param, text_param, zeroed_buffer,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::kernels::typed::{Dtype, Storage, with_real_mem, with_sim_mem};
use crate::mem::AlignedBuffer;
use crate::units::{format_count, format_count_signed};

/// The shape parameters of every 4-D tensor kernel.
pub(crate) const DIMS: [ParamSpec; 4] = [
    ParamSpec::int("n", 1, 1 << 16, None, "batch size N"),
    ParamSpec::int("c", 1, 1 << 16, None, "channels C"),
    ParamSpec::int("h", 1, 1 << 16, None, "height H"),
    ParamSpec::int("w", 1, 1 << 16, None, "width W"),
];

const LAYOUT: ParamSpec = ParamSpec::choice(
    "layout",
    &["nchw", "nhwc"],
    Some("nchw"),
    "storage order: nchw (channels first) or nhwc (channels last)",
);

const CHANNEL_SUM_PARAMS: [ParamSpec; 6] = [
    DIMS[0],
    DIMS[1],
    DIMS[2],
    DIMS[3],
    LAYOUT,
    ParamSpec::choice(
        "dtype",
        &["f32", "f64"],
        Some("f32"),
        "element type: f32 (4 bytes) or f64",
    ),
];

const STENCIL_PARAMS: [ParamSpec; 5] = [DIMS[0], DIMS[1], DIMS[2], DIMS[3], LAYOUT];

pub(crate) const CHANNEL_SUM: KernelSpec = KernelSpec {
    name: "channel-sum",
    family: Family::Tensor,
    params: &CHANNEL_SUM_PARAMS,
    summary: "Per-channel sums of an (N, C, H, W) tensor stored channels-first or channels-last.",
    example: "n=4 c=64 h=32 w=32 layout=nhwc",
    explanation: "Per-channel sums of a 4-D (N, C, H, W) tensor, channel by channel. In \
                  channels-first (nchw) storage one channel of one image is a contiguous \
                  plane, so the walk streams; in channels-last (nhwc) the channel's values \
                  are C elements apart, so each line brings one useful value unless the \
                  other channels' values stay cached until their turn. Compare the layouts \
                  at the same shape.",
    prepare: prepare_channel_sum,
    plan: plan_channel_sum,
    pattern: channel_sum_pattern,
    simulation_note: None,
    accesses: Some(tensor_elements),
    simulate: SimStart::Cold,
};

pub(crate) const STENCIL3X3: KernelSpec = KernelSpec {
    name: "stencil3x3",
    family: Family::Tensor,
    params: &STENCIL_PARAMS,
    summary: "A 3×3 depthwise stencil over an (N, C, H, W) tensor in either layout.",
    example: "n=1 c=32 h=56 w=56 layout=nchw",
    explanation: "A 3×3 depthwise box stencil (valid-only) over a 4-D tensor, each output in \
                  the layout's own storage order: 9 loads and one store per output. In nchw \
                  the 3 input rows of one channel are W elements apart; in nhwc every tap is \
                  C elements from its neighbour and 3 rows span 3·W·C elements, so the \
                  working set of the stencil grows with the channel count.",
    prepare: prepare_stencil,
    plan: plan_stencil,
    pattern: stencil_pattern,
    simulation_note: None,
    accesses: Some(stencil_accesses),
    simulate: SimStart::Cold,
};

/// A 4-D tensor's shape and storage order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tensor4 {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    /// `true`: channels last (nhwc).
    pub nhwc: bool,
}

impl Tensor4 {
    pub(crate) fn from_params(kernel: &str, params: &Params) -> Result<Self, KernelError> {
        let nhwc = match params.get("layout") {
            Some(_) => text_param(kernel, params, "layout")? == "nhwc",
            None => false,
        };
        let tensor = Self {
            n: size_param(kernel, params, "n")?,
            c: size_param(kernel, params, "c")?,
            h: size_param(kernel, params, "h")?,
            w: size_param(kernel, params, "w")?,
            nhwc,
        };
        tensor.elements()?;
        Ok(tensor)
    }

    /// Elements of the tensor (checked against the buffer limit).
    pub fn elements(&self) -> Result<usize, KernelError> {
        checked_elements("n", &[self.n, self.c, self.h, self.w])
    }

    /// The storage index of element (n, c, h, w).
    #[inline(always)]
    pub fn index(&self, n: usize, c: usize, h: usize, w: usize) -> usize {
        if self.nhwc {
            ((n * self.h + h) * self.w + w) * self.c + c
        } else {
            ((n * self.c + c) * self.h + h) * self.w + w
        }
    }

    /// Element (n, c, h, w) of storage index `index` (the inverse of [`Tensor4::index`]).
    pub fn coords(&self, index: usize) -> (usize, usize, usize, usize) {
        if self.nhwc {
            let (rest, c) = (index / self.c, index % self.c);
            let (rest, w) = (rest / self.w, rest % self.w);
            (rest / self.h, c, rest % self.h, w)
        } else {
            let (rest, w) = (index / self.w, index % self.w);
            let (rest, h) = (rest / self.h, rest % self.h);
            (rest / self.c, rest % self.c, h, w)
        }
    }
}

fn tensor_elements(params: &Params) -> Result<u64, KernelError> {
    Ok(Tensor4::from_params("channel-sum", params)?.elements()? as u64)
}

fn plan_channel_sum(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![
        Tensor4::from_params("channel-sum", params)?.elements()?,
    ])
}

fn plan_stencil(params: &Params) -> Result<Vec<usize>, KernelError> {
    let tensor = Tensor4::from_params("stencil3x3", params)?;
    if tensor.h < 3 || tensor.w < 3 {
        return Err(invalid(
            "h",
            format!(
                "a valid-only 3×3 stencil needs h ≥ 3 and w ≥ 3 (got h={}, w={})",
                tensor.h, tensor.w
            ),
        ));
    }
    let len = tensor.elements()?;
    Ok(vec![len, len])
}

/// The `channel-sum` order (see the module doc); returns Σ_c (c mod 7 + 1)·sum_c.
pub fn channel_sum<M: Mem>(m: &mut M, t: Tensor4) -> f64 {
    let plane = t.h * t.w;
    let mut checksum = 0.0;
    for c in 0..t.c {
        let mut acc = [0.0; ACCUMULATORS];
        for n in 0..t.n {
            let (start, step) = if t.nhwc {
                (n * plane * t.c + c, t.c)
            } else {
                ((n * t.c + c) * plane, 1)
            };
            m.sum_run(Strided::new(0, start, step as isize), plane, &mut acc);
        }
        checksum += channel_weight(c) * fold(&acc);
    }
    checksum
}

/// The weight of channel `c` in `channel-sum`'s checksum.
fn channel_weight(c: usize) -> f64 {
    (c % 7 + 1) as f64
}

/// The `stencil3x3` order (see the module doc): buffer 0 in, buffer 1 out.
///
/// Never inlined: inlined beside the copy engine's `to-nhwc` path in one `run` (when the two
/// kernels shared an instance type), its nine-load loop kept fewer row pointers in registers
/// and the nhwc order ran 1.5× slower.
#[inline(never)]
pub fn stencil3x3<M: Mem<Elem = f64>>(m: &mut M, t: Tensor4) -> f64 {
    // Storage distance between vertically and horizontally adjacent elements.
    let (down, right) = if t.nhwc { (t.w * t.c, t.c) } else { (t.w, 1) };
    let mut total = 0.0;
    let mut output = |m: &mut M, n: usize, c: usize, h: usize, w: usize| {
        let centre = t.index(n, c, h, w);
        let top_left = centre - down - right;
        let mut sum = 0.0;
        for dh in 0..3 {
            for dw in 0..3 {
                sum += m.load(0, top_left + dh * down + dw * right);
            }
        }
        m.store(1, centre, sum);
        total += sum;
    };
    for n in 0..t.n {
        if t.nhwc {
            for h in 1..t.h - 1 {
                for w in 1..t.w - 1 {
                    for c in 0..t.c {
                        output(m, n, c, h, w);
                    }
                }
            }
        } else {
            for c in 0..t.c {
                for h in 1..t.h - 1 {
                    for w in 1..t.w - 1 {
                        output(m, n, c, h, w);
                    }
                }
            }
        }
    }
    total + sampled_sum(m, 1, t.n * t.c * t.h * t.w)
}

struct ChannelSum {
    tensor: Tensor4,
    x: Storage<1>,
    expected: f64,
}

fn prepare_channel_sum(params: &Params, options: &PrepareOptions) -> Prepared {
    let tensor = Tensor4::from_params("channel-sum", params)?;
    let len = tensor.elements()?;
    // Element i holds cell_value(i) in either type (exact in f32: ≤ 251).
    let x = Storage::new(
        Dtype::from_params(params)?,
        [len],
        [true],
        cell_value,
        options,
    )?;
    // Straightforward reference: every storage index, weighted by its channel.
    let checked = if x.has_data() { len } else { 0 };
    let expected = (0..checked)
        .map(|i| channel_weight(tensor.coords(i).1) * x.value(0, i))
        .sum();
    Ok(Box::new(ChannelSum {
        tensor,
        x,
        expected,
    }))
}

impl Instance for ChannelSum {
    fn work(&self) -> Work {
        let elements = (self.tensor.n * self.tensor.c * self.tensor.h * self.tensor.w) as u64;
        Work::reads(elements, self.x.dtype().bytes())
    }

    fn run(&mut self) -> f64 {
        let tensor = self.tensor;
        with_real_mem!(&mut self.x, |m| channel_sum(m, tensor))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let tensor = self.tensor;
        with_sim_mem!(&mut self.x, sink, |m| channel_sum(m, tensor));
    }
}

/// The stencil's two tensors of the same shape and layout: buffer 0 filled, buffer 1 zeroed.
struct Stencil {
    tensor: Tensor4,
    src: AlignedBuffer,
    dst: AlignedBuffer,
    expected: f64,
}

/// The 3×3 box sum around interior element (n, c, h, w) of a filled tensor.
fn box_sum(t: &Tensor4, n: usize, c: usize, h: usize, w: usize) -> f64 {
    let mut sum = 0.0;
    for hh in h - 1..=h + 1 {
        for ww in w - 1..=w + 1 {
            sum += cell_value(t.index(n, c, hh, ww));
        }
    }
    sum
}

fn prepare_stencil(params: &Params, options: &PrepareOptions) -> Prepared {
    plan_stencil(params)?;
    let tensor = Tensor4::from_params("stencil3x3", params)?;
    let len = tensor.elements()?;
    let interior =
        |h: usize, w: usize| (1..tensor.h - 1).contains(&h) && (1..tensor.w - 1).contains(&w);
    let mut expected = 0.0;
    for i in 0..len {
        let (n, c, h, w) = tensor.coords(i);
        if interior(h, w) {
            expected += box_sum(&tensor, n, c, h, w);
        }
    }
    for k in check_indices(len) {
        let (n, c, h, w) = tensor.coords(k);
        if interior(h, w) {
            expected += box_sum(&tensor, n, c, h, w);
        }
    }
    Ok(Box::new(Stencil {
        tensor,
        src: filled_buffer(len, options)?,
        dst: zeroed_buffer(len, 1, options)?,
        expected,
    }))
}

impl Instance for Stencil {
    /// The stencil reads the tensor and writes its interior once (its compulsory traffic).
    fn work(&self) -> Work {
        let t = self.tensor;
        let elements = (t.n * t.c * t.h * t.w) as u64;
        let outputs = (t.n * t.c * (t.h - 2) * (t.w - 2)) as u64;
        Work {
            bytes_read: elements * 8,
            bytes_written: outputs * 8,
            elements: outputs,
        }
    }

    fn run(&mut self) -> f64 {
        let mut m = RealMem::new([&mut self.src, &mut self.dst]);
        stencil3x3(&mut m, self.tensor)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let mut m = SimMem::new([&mut self.src, &mut self.dst], sink);
        stencil3x3(&mut m, self.tensor);
    }
}

fn stencil_accesses(params: &Params) -> Result<u64, KernelError> {
    plan_stencil(params)?;
    let t = Tensor4::from_params("stencil3x3", params)?;
    let outputs = (t.n * t.c * (t.h - 2) * (t.w - 2)) as u64;
    Ok(outputs * 10 + check_indices(t.elements()?).count() as u64)
}

fn channel_sum_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let t = Tensor4::from_params("channel-sum", params)?;
    let bytes = i64::from(Dtype::from_params(params)?.bytes());
    let (step, what) = if t.nhwc {
        (t.c as i64, "one channel of one image")
    } else {
        (1, "one channel plane")
    };
    let count = t.h * t.w;
    let stride_bytes = step * bytes;
    Ok(Some(StridePattern {
        buffer: 0,
        stride_bytes,
        count: count as u64,
        description: format!(
            "{what}: {} elements {} B apart",
            format_count(count as u64),
            format_count_signed(stride_bytes)
        ),
    }))
}

fn stencil_pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let t = Tensor4::from_params("stencil3x3", params)?;
    let step = if t.nhwc { t.w * t.c } else { t.w };
    Ok(Some(StridePattern::elements(
        0,
        step as isize,
        3,
        "the three input rows of one output",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Recorder(Vec<(u64, u32)>);

    impl AccessSink for Recorder {
        fn load(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len));
        }
        fn store(&mut self, _: u64, _: u32) {
            panic!("a sum stores nothing");
        }
    }

    #[test]
    fn channel_sum_streams_for_c_for_n_for_h_for_w_at_the_layouts_address() {
        for (nhwc, f32_elements) in [(false, true), (true, true), (true, false)] {
            let t = Tensor4 {
                n: 2,
                c: 3,
                h: 2,
                w: 3,
                nhwc,
            };
            let len = 36;
            let bytes: u32 = if f32_elements { 4 } else { 8 };
            let mut recorder = Recorder::default();
            if f32_elements {
                let mut cells: Vec<f32> = (0..len).map(|i| cell_value(i) as f32).collect();
                channel_sum(&mut SimMem::new([&mut cells], &mut recorder), t);
            } else {
                let mut cells: Vec<f64> = (0..len).map(cell_value).collect();
                channel_sum(&mut SimMem::new([&mut cells], &mut recorder), t);
            }
            let mut want = Vec::new();
            for c in 0..t.c {
                for n in 0..t.n {
                    for h in 0..t.h {
                        for w in 0..t.w {
                            let offset = t.index(n, c, h, w) as u64 * u64::from(bytes);
                            want.push((crate::kernels::access::sim_address(0, 0) + offset, bytes));
                        }
                    }
                }
            }
            assert_eq!(recorder.0, want, "nhwc={nhwc} f32={f32_elements}");
        }
    }

    #[test]
    fn coords_invert_index_in_both_layouts() {
        for nhwc in [false, true] {
            let t = Tensor4 {
                n: 2,
                c: 3,
                h: 4,
                w: 5,
                nhwc,
            };
            for i in 0..120 {
                let (n, c, h, w) = t.coords(i);
                assert!(n < 2 && c < 3 && h < 4 && w < 5);
                assert_eq!(t.index(n, c, h, w), i);
            }
        }
        let nhwc = Tensor4 {
            n: 1,
            c: 3,
            h: 2,
            w: 2,
            nhwc: true,
        };
        assert_eq!(nhwc.index(0, 1, 0, 1), 4);
    }
}
