//! Running a plan: what `stridelab run` prepares ([`plan`]), the session over its points
//! ([`session`]), one point measured ([`runner`]), several passes pooled into one document
//! ([`pool`]), the copy planner's wisdom prefilled from a suite ([`prefill`]) and the Ctrl-C
//! stop flag ([`stop`]), and what `stridelab run` concludes about its document beside its
//! tables ([`verdicts`]).

pub mod plan;
pub mod pool;
pub mod prefill;
pub mod runner;
pub mod session;
pub mod stop;
pub mod verdicts;
