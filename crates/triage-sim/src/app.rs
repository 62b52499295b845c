//! Applications: what each end of a flow writes, and when.

/// A message an application writes.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageSpec {
    /// Name reported in results (e.g. "P0").
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Priority, 0 most urgent (used by priority schedulers and carried to the receiver);
    /// `None` takes the connection's default priority.
    pub priority: Option<u8>,
    /// Write time relative to the flow start; `None` writes as soon as the connection is up.
    /// A time before the connection is up also writes at connection time.
    pub at_ns: Option<u64>,
}

/// The application on one end of a flow.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum AppSpec {
    /// Writes nothing; closes when the peer closes.
    #[default]
    Sink,
    /// Writes `bytes` as one message named "bulk" as soon as the connection is up.
    Bulk {
        /// Bytes to send.
        bytes: u64,
    },
    /// Writes named, sized messages into the one connection.
    Messages(Vec<MessageSpec>),
}

impl AppSpec {
    /// The messages this application writes, in write order.
    pub fn messages(&self) -> Vec<MessageSpec> {
        match self {
            AppSpec::Sink => Vec::new(),
            AppSpec::Bulk { bytes } => vec![MessageSpec { name: "bulk".into(), bytes: *bytes, priority: None, at_ns: None }],
            AppSpec::Messages(m) => m.clone(),
        }
    }
}
