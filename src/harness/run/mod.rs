//! Running a plan: what `stridelab run` prepares ([`plan`]), the session over its points
//! ([`session`]), one point measured ([`runner`]), several passes pooled into one document
//! ([`pool`]) and the Ctrl-C stop flag ([`stop`]).

pub mod plan;
pub mod pool;
pub mod runner;
pub mod session;
pub mod stop;
