//! Running a plan: what `stridelab run` prepares ([`plan`]), the session over its points
//! ([`session`]), one point measured ([`runner`]), several passes pooled into one document
//! ([`pool`]), the copy planner's wisdom prefilled from a suite ([`prefill`]) and the Ctrl-C
//! stop flag ([`stop`]), and what `stridelab run` concludes about its document beside its
//! tables ([`verdicts`]).

pub(crate) mod plan;
pub(crate) mod pool;
pub(crate) mod prefill;
pub(crate) mod runner;
pub(crate) mod session;
pub(crate) mod stop;
pub(crate) mod verdicts;
