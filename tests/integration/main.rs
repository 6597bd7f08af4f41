//! The integration tests, one binary: each module runs the real `stridelab` binary or the
//! library on one surface. (The fuzz tests and the paired gate tests, which keep the CPUs busy
//! or measure timings, are binaries of their own so they never run beside these.)

#[path = "../common/mod.rs"]
mod common;

mod address_only;
mod architecture;
mod cachegrind_sim;
mod copy_engine_cachegrind;
mod copy_planner_cli;
mod edges_bounds;
mod edges_documents;
mod edges_outputs;
mod error_chains;
mod gate_offline;
mod gate_run;
mod geometry_flags_cli;
mod harness_run_suite;
mod harness_suites;
mod history_fixtures;
mod infer_cli;
mod infer_synthetic;
mod infer_verdicts;
mod info_cli;
mod kernels_cachegrind;
mod kernels_checksums;
mod kernels_orders;
mod kernels_sim_cli;
mod layout_cache_cli;
mod layout_cli;
mod layout_numpy;
mod layout_props;
mod layout_seeds;
mod layout_verdicts;
mod loop_kernel;
mod matmul_cachegrind;
mod matmul_report;
mod report_browser;
mod report_element_types;
mod report_render;
mod report_tensor;
mod report_truth;
mod run_cli;
mod run_history;
mod shell_cli;
mod sim_against_build;
mod sim_loop_cli;
mod sim_prefetch_cli;
mod sim_tlb_cli;
mod sweep_model;
mod tensor_cachegrind;
mod time_model_cli;
mod trace_cli;
mod why_cli;
