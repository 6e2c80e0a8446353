//! The runtime layer: the only code that touches processes. The event loop
//! (`supervisor`) carries out what the lifecycle decides; `reaper` is the one
//! waiter for children; `spawn` starts them; `signals` sets podinit's own
//! signal dispositions and resets a child's; `task` keeps panics in tasks from
//! vanishing.

pub mod reaper;
pub mod signals;
pub mod spawn;
pub mod supervisor;
pub mod task;
