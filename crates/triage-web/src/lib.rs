//! triage-web: the page side of triage, so every scheme can be judged on real pages.
//!
//! - [`import`]: HAR 1.2 ([`har`]) and Chrome DevTools protocol logs ([`devtools`]) into a
//!   [`Page`], counting every entry not used by [`SkipReason`].
//! - [`model`]: [`Page`], [`WebObject`] and the discovery graph a simulated client walks (its
//!   module docs say how), with [`DiscoveryConfig`] processing delays.
//! - [`classify`]: CATS's five levels (CATS §II-D-1, Table I) and the thesis's eight content
//!   categories with Essential / Non-Essential / Maybe (§5.3.2, Table 4), using the built-in
//!   [`trackers`] list; [`rules`] override both from TOML.
//! - [`qoe`]: first contentful paint, PriorityBucket's first render time (§5.1), largest
//!   contentful paint, a time-to-interactive proxy, a Speed Index proxy, page load time and
//!   CATS's CLS risk (§III-C), from per-object delivery times; [`partial`] turns reports of
//!   partially delivered objects into those times (per-type deadlines) and into data loss.
//! - [`builtin`]: the CATS page, PriorityBucket's Bing and YouTube, a news page from the
//!   thesis's Table 4, and the thesis's six page versions ([`news_versions`]).
//! - [`export`]: the thesis's `transfer_sequence.json` and dummy files (HAR_Replica, §5.7);
//!   [`sequence`] reads such a file back into a [`Page`] in its request order.
//! - [`reliability`]: which objects travel as unreliable datagram chunks, by the thesis's
//!   scenarios (§5.9), the essentialness classifier or user rules.
//!
//! Nothing here reads a clock or a random source; every map is ordered, so outputs are
//! deterministic.
#![warn(missing_docs)]

pub mod builtin;
pub mod classify;
pub mod content;
pub mod cputrace;
pub mod devtools;
pub mod error;
pub mod export;
pub mod glob;
pub mod har;
pub mod import;
mod json;
pub mod model;
pub mod netinfer;
pub mod news_versions;
pub mod partial;
pub mod qoe;
pub mod reliability;
pub mod rules;
pub mod sequence;
pub mod speedline;
pub mod trackers;
pub mod urlparts;

pub use classify::{ContentCategory, Essentialness};
pub use error::{FileError, WebError};
pub use import::{import_file, import_str, import_value, Adjustment, Import, ImportOptions, SkipReason, SourceFormat};
pub use model::{
    BrowserPriority, ContentType, DiscoveryConfig, FetchPriority, HttpProtocol, Initiator, ObjectId, Page,
    RecordedGate, RenderBlocking, WebObject,
};
pub use partial::{data_loss, DataLoss, LossCauses, PartialConfig, PartialDeliveries, PartialDelivery};
pub use qoe::{estimate, Deliveries, Delivery, Qoe, QoeConfig};
pub use reliability::{Reliability, ReliabilityPlan, ReliabilityPolicy};
pub use rules::Rules;
