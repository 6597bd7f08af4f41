//! `loop nest=TEXT arrays=DECL;DECL…`: a user's own affine loop nest (the LOOP language of
//! `sim --loop`, [`crate::layout::loops`]) as a kernel of the catalogue, so a nest can be a
//! point of a suite, a record of a results document, compared, gated and drawn.
//!
//! Order: [`NestOrder`], the innermost runs `sim --loop` simulates, over buffers placed where
//! `sim --loop` places them; so the point's simulated misses are `sim --loop`'s counts. The
//! language computes no values, so every cell holds 1: a store then writes back what was there,
//! every run reads the same values, and each run is held to the first run's checksum.

use crate::cache::AccessSink;
use crate::kernels::access::{Element, Placement as BufferPlacement, RealMem, SimMem};
use crate::kernels::common::{invalid, text_param};
use crate::kernels::families::nest_order::NestOrder;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Prepared,
    SimStart, StridePattern, Work,
};
use crate::layout::describe::caret;
use crate::layout::loops::{LoopError, LoopNest, Placement, Source, check, walk};

/// Most bytes the arrays of a nest may take together: they are allocated for real.
pub const MAX_NEST_BYTES: u64 = 2 << 30;

/// Most accesses one run of a `loop` point may make, whatever the run's own limit: the largest
/// a suite point may declare (counting them walks the outer loops, so the count is bounded too).
pub const MAX_NEST_ACCESSES: u64 = 1 << 31;

/// Most arrays a nest may declare: one simulated buffer slot each, below the copy engine's.
pub const MAX_NEST_ARRAYS: usize = crate::kernels::access::STAGE_BUFFER;

const PARAMS: [ParamSpec; 3] = [
    ParamSpec::text(
        "nest",
        None,
        "the loop nest in the language of `sim --loop` (docs/loops.md), e.g. \
         'for i in 0..1024: for j in 0..1024: s += a[i, j]'",
    ),
    ParamSpec::text(
        "arrays",
        None,
        "its arrays' declarations, separated by `;`, e.g. 'a = f64[1024, 1024] ld=1032; b = \
         f64[1024, 1024]' (one element type, f64 or f32, at most 2 GiB together)",
    ),
    ParamSpec::text(
        "name",
        Some("nest"),
        "a short name for tables and the report (default: the nest's text)",
    ),
];

pub(crate) const LOOP: KernelSpec = KernelSpec {
    name: "loop",
    family: Family::Loop,
    params: &PARAMS,
    summary: "Your own loop nest (the language of `sim --loop`), timed and simulated as one stream.",
    example: "name=col-sum 'nest=for j in 0..512: for i in 0..512: s += a[i, j]' \
              'arrays=a = f64[512, 512]'",
    explanation: "The order of a nest decides which accesses find their line already \
                  cached: walking an array in the order it is laid out uses every element of \
                  each line it loads, a column walk uses one element per line and, at a \
                  power-of-two leading dimension, few cache sets, so it misses more and runs \
                  slower. `loop` times a nest you write over arrays you declare (the language \
                  of `stridelab sim --loop`) and simulates the very stream it times, over \
                  arrays placed where `sim --loop` places them, so its misses are `sim \
                  --loop`'s. Time is per access (every load and store of the body).",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: Some(accesses),
    simulate: SimStart::Cold,
};

/// The nest and its arrays, parsed and laid out (not yet walked: see [`accesses`]).
fn parsed(params: &Params) -> Result<LoopNest, KernelError> {
    let text = text_param("loop", params, "nest")?;
    let declarations = declarations(text_param("loop", params, "arrays")?)?;
    let nest = LoopNest::parse(text, &declarations).map_err(loop_error)?;
    let dtype = nest.arrays[0].dtype;
    if !matches!(dtype, "f64" | "f32") {
        return Err(invalid(
            "arrays",
            format!(
                "a timed nest runs f64 or f32 arrays; {} is {dtype}",
                nest.arrays[0].name
            ),
        ));
    }
    if let Some(other) = nest.arrays.iter().find(|a| a.dtype != dtype) {
        return Err(invalid(
            "arrays",
            format!(
                "{} is {}, but a timed nest runs one element type over every array ({dtype} \
                 here)",
                other.name, other.dtype
            ),
        ));
    }
    let bytes = nest
        .arrays
        .iter()
        .fold(0u64, |sum, a| sum.saturating_add(a.bytes()));
    if bytes > MAX_NEST_BYTES {
        return Err(invalid(
            "arrays",
            format!(
                "the arrays take {bytes} bytes together; a timed nest allocates at most \
                 {MAX_NEST_BYTES}"
            ),
        ));
    }
    Placement::of(&nest.arrays).map_err(loop_error)?;
    Ok(nest)
}

/// `a = f64[4]; b = f64[4]` → one declaration each (`;` cannot occur inside one).
fn declarations(text: &str) -> Result<Vec<String>, KernelError> {
    let items: Vec<String> = text.split(';').map(|d| d.trim().to_string()).collect();
    if let Some(k) = items.iter().position(String::is_empty) {
        return Err(invalid(
            "arrays",
            format!(
                "declaration #{} is empty; separate declarations with single `;`",
                k + 1
            ),
        ));
    }
    if items.len() > MAX_NEST_ARRAYS {
        return Err(invalid(
            "arrays",
            format!(
                "{} arrays declared; a nest may have at most {MAX_NEST_ARRAYS}",
                items.len()
            ),
        ));
    }
    Ok(items)
}

/// A refused nest as the parameter it comes from, text errors with their column and a caret.
fn loop_error(err: LoopError) -> KernelError {
    match &err {
        LoopError::Text {
            origin,
            input,
            column,
            message,
        } => {
            let (param, which) = match origin {
                Source::Loop => ("nest", String::new()),
                Source::Array(k) => ("arrays", format!("declaration #{}, ", k + 1)),
            };
            let at = caret(input, *column);
            invalid(
                param,
                format!(
                    "{which}error at column {column}: {message}\n{}",
                    at.trim_end()
                ),
            )
        }
        LoopError::Declaration { .. } => invalid("arrays", err.to_string()),
        LoopError::TooManyAccesses { .. } | LoopError::TooManyIterations { .. } => invalid(
            "nest",
            format!(
                "the nest makes more than {MAX_NEST_ACCESSES} accesses (or outer iterations) a \
                 run, the most a `loop` point may make"
            ),
        ),
        _ => invalid("nest", err.to_string()),
    }
}

/// The nest, checked: every index in bounds, its accesses counted.
fn checked<T: Element>(params: &Params) -> Result<NestOrder<T>, KernelError> {
    let nest = parsed(params)?;
    let facts = check(&nest, MAX_NEST_ACCESSES).map_err(loop_error)?;
    NestOrder::new(nest, facts).map_err(loop_error)
}

/// Buffer sizes in f64 elements (the catalogue's memory rule counts 8 bytes an element).
fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(parsed(params)?
        .arrays
        .iter()
        .map(|a| a.bytes().div_ceil(8) as usize)
        .collect())
}

/// Loads and stores of one run, counted exactly (and every index proved in bounds).
fn accesses(params: &Params) -> Result<u64, KernelError> {
    let nest = parsed(params)?;
    Ok(check(&nest, MAX_NEST_ACCESSES)
        .map_err(loop_error)?
        .accesses)
}

/// A nest has as many strided patterns as references: the record carries no single one.
fn pattern(_params: &Params) -> Result<Option<StridePattern>, KernelError> {
    Ok(None)
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    match parsed(params)?.arrays[0].dtype {
        "f32" => prepare_typed::<f32>(params, options),
        _ => prepare_typed::<f64>(params, options),
    }
}

fn prepare_typed<T: Element>(params: &Params, options: &PrepareOptions) -> Prepared {
    let order = checked::<T>(params)?;
    let placement = BufferPlacement {
        bases: order.bases().to_vec(),
        table: None,
    };
    if options.simulate_only {
        return Ok(Box::new(NestInstance {
            order,
            buffers: Vec::new(),
            placement,
            expected: f64::NAN,
        }));
    }
    let mut buffers: Vec<Box<[T]>> = order
        .buffers()
        .iter()
        .map(|&len| vec![T::from_f64(1.0); len].into_boxed_slice())
        .collect();
    let expected = order.run(&mut RealMem::table(&mut buffers));
    Ok(Box::new(NestInstance {
        order,
        buffers,
        placement,
        expected,
    }))
}

/// A nest with its buffers (none when prepared `simulate_only`).
struct NestInstance<T: Element> {
    order: NestOrder<T>,
    buffers: Vec<Box<[T]>>,
    placement: BufferPlacement,
    /// The first run's checksum (NaN without buffers: nothing runs).
    expected: f64,
}

impl<T: Element> Instance for NestInstance<T> {
    fn work(&self) -> Work {
        self.order.work()
    }

    fn run(&mut self) -> f64 {
        if self.buffers.is_empty() {
            return f64::NAN;
        }
        self.order.run(&mut RealMem::table(&mut self.buffers))
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    /// With buffers, the executor's own stream; without, the same stream from the walk it
    /// executes (`layout::loops::walk`, held equal to the executor's by a test).
    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        if self.buffers.is_empty() {
            let placement = Placement {
                bases: self.placement.bases.clone(),
            };
            // The nest passed its check when the instance was prepared: the walk cannot fail.
            let _ = walk(self.order.nest(), &placement, &mut |event| {
                if event.is_store {
                    sink.store(event.addr, event.len);
                } else {
                    sink.load(event.addr, event.len);
                }
            });
            return;
        }
        let mut mem = SimMem::placed(&mut self.buffers, sink, &self.placement);
        self.order.run(&mut mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::catalogue::{find, resolve_params};
    use crate::kernels::copy_planner::planner_for_tests;

    fn params(nest: &str, arrays: &str) -> Result<Params, KernelError> {
        let args =
            [("nest", nest), ("arrays", arrays)].map(|(k, v)| (k.to_string(), v.to_string()));
        resolve_params(find("loop").unwrap(), &args)
    }

    /// Every access, in order.
    #[derive(Default)]
    struct Log(Vec<(u64, u32, bool)>);

    impl AccessSink for Log {
        fn load(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, false));
        }
        fn store(&mut self, addr: u64, len: u32) {
            self.0.push((addr, len, true));
        }
    }

    fn stream(params: &Params, simulate_only: bool) -> Vec<(u64, u32, bool)> {
        let options = PrepareOptions {
            simulate_only,
            ..PrepareOptions::with_planner(planner_for_tests())
        };
        let mut instance = prepare(params, &options).unwrap();
        let mut log = Log::default();
        instance.simulate(&mut log);
        log.0
    }

    #[test]
    fn the_stream_is_the_same_with_and_without_buffers() {
        for (nest, arrays) in [
            (
                "for i in 0..8: for j in i..8: a[j, i] += b[i, j]",
                "a = f64[8, 8] ld=9; b = f64[8, 8]",
            ),
            (
                "for j in 0..8: for i in 0..8: s += a[i, j]",
                "a = f32[8, 8]",
            ),
            ("for i in 0..4: read a[i], a[3 - i]", "a = f64[4] align=64"),
        ] {
            let p = params(nest, arrays).unwrap();
            let with = stream(&p, false);
            assert!(!with.is_empty(), "{nest}");
            assert_eq!(with, stream(&p, true), "{nest}");
        }
    }

    #[test]
    fn every_run_returns_the_first_runs_checksum() {
        // A shifting assignment changes the array it reads unless every cell holds the same.
        let p = params("for i in 0..15: a[i] = a[i + 1]", "a = f64[16]").unwrap();
        let options = PrepareOptions::with_planner(planner_for_tests());
        let mut instance = prepare(&p, &options).unwrap();
        let expected = instance.expected_checksum();
        assert!(expected.is_finite());
        for _ in 0..3 {
            assert_eq!(instance.run(), expected);
        }
        assert_eq!(instance.work().elements, 30);
    }

    #[test]
    fn table_of_refused_nests() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "for i in 0..4 s += a[i]",
                "a = f64[4]",
                "`nest`: error at column",
            ),
            (
                "for i in 0..4: s += a[i]",
                "a = f64[]",
                "`arrays`: declaration #1, error at column",
            ),
            (
                "for i in 0..4: s += a[i]",
                "a = f64[4];",
                "declaration #2 is empty",
            ),
            ("for i in 0..4: s += a[i]", "a = i32[4]", "f64 or f32"),
            (
                "for i in 0..4: a[i] = b[i]",
                "a = f64[4]; b = f32[4]",
                "one element type",
            ),
            (
                "for i in 0..4: s += a[i, 0]",
                "a = f64[16384, 16385]",
                "at most 2147483648",
            ),
        ];
        for (nest, arrays, needle) in cases {
            let err = params(nest, arrays).expect_err(needle).to_string();
            assert!(
                err.contains(needle),
                "{nest} / {arrays}: `{err}` lacks `{needle}`"
            );
        }
        // Bounds and counts are checked when the accesses are estimated (before any run).
        let spec = find("loop").unwrap();
        let out = params("for i in 0..4: s += a[i + 1]", "a = f64[4]").unwrap();
        let err = (spec.accesses.unwrap())(&out).unwrap_err().to_string();
        assert!(
            err.contains("leaves its array") && err.contains("i = 3"),
            "{err}"
        );
        let huge = params(
            "for i in 0..65536: for j in 0..65536: s += a[0]",
            "a = f64[1]",
        )
        .unwrap();
        let err = (spec.accesses.unwrap())(&huge).unwrap_err().to_string();
        assert!(err.contains("the most a `loop` point may make"), "{err}");
    }

    #[test]
    fn the_name_defaults_to_the_nest() {
        let p = params("for i in 0..4: s += a[i]", "a = f64[4]").unwrap();
        assert_eq!(p["name"].to_string(), "for i in 0..4: s += a[i]");
    }
}
