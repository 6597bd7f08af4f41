//! The CPU's model name: what names a machine beside its cache geometry (in the manifest of
//! every results file, and in the copy planner's wisdom, whose timings hold for one model).

#![forbid(unsafe_code)]

use std::fs;

/// `model name` from /proc/cpuinfo, else CPUID's brand string, if either is found.
pub fn cpu_model() -> Option<String> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").ok();
    let from_proc = cpuinfo.as_deref().and_then(|text| {
        text.lines()
            .find(|l| l.starts_with("model name") || l.starts_with("Model"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    from_proc.or_else(cpuid_brand)
}

#[cfg(target_arch = "x86_64")]
fn cpuid_brand() -> Option<String> {
    raw_cpuid::CpuId::new()
        .get_processor_brand_string()
        .map(|b| b.as_str().trim().to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_brand() -> Option<String> {
    None
}
