//! The simulator: nodes, links, flows and the event loop.
//!
//! Build a [`Network`] (nodes and links; routes are computed as shortest paths), add
//! [`FlowSpec`]s, then [`Simulator::run`]. The connections are triage-core's sans-IO
//! [`Connection`]s: the simulator feeds them packets and expired timers and drains what
//! they send, exactly as a socket driver would.

use std::collections::{HashMap, VecDeque};

use triage_core::wire::{Addr, Packet, TcpFlags};
use triage_core::{Connection, ConnectionConfig, Endpoint, Event, SchedulerKind};

use std::sync::Arc;

use crate::app::{AppSpec, BrowserModel, MessageSpec, PageLoad};
use crate::event::{Ev, EventQueue};
use crate::link::{Arrival, Link};
use crate::queue::SimPacket;
use crate::recorder::{ConnSample, ConnSeries, MessageRecord, PacketRecord, QueueSample, Recorder};

fn packet_record(t_ns: u64, link: u32, p: &Packet) -> PacketRecord {
    PacketRecord {
        t_ns,
        link,
        src: (p.src.node, p.src.port),
        dst: (p.dst.node, p.dst.port),
        flags: p.flags.0,
        seq: p.seq,
        ack: p.ack,
        payload_bytes: p.payload_bytes,
        wire_bytes: p.wire_bytes(),
        ecn: p.ecn as u8,
        dscp: p.dscp,
        priority_option: p.priority_option,
        sack_blocks: p.sack_len,
        event: "enqueue",
    }
}

/// Writes a message: reliable, or in QUIC mode as DATAGRAM chunks when `unreliable`. In QUIC
/// mode the stream's RFC 9218 urgency is `urgency`, or the priority when none is given, and
/// the message follows message `after` of this end on its stream when one is named.
#[allow(clippy::too_many_arguments)]
fn write_to(
    conn: &mut Endpoint,
    now_ns: u64,
    id: u32,
    len: u64,
    prio: Option<u8>,
    unreliable: bool,
    urgency: Option<u8>,
    after: Option<u32>,
) {
    use triage_core::quic::{PrioritySignals, Reliability, StreamChoice};
    match conn {
        Endpoint::Quic(q) => {
            let p = prio.unwrap_or(q.config().default_priority);
            let meta = triage_core::sched::MessageMeta { id, len_bytes: len, priority: p };
            let signals = PrioritySignals { urgency: urgency.unwrap_or(p.min(7)), incremental: false };
            let rel = if unreliable { Reliability::Unreliable } else { Reliability::Reliable };
            match after.and_then(|a| q.stream_of(a)) {
                Some(st) => q.write_message_on(now_ns, meta, signals, rel, StreamChoice::On(st)),
                None => q.write_message(now_ns, meta, signals, rel),
            }
        }
        Endpoint::Tcp(_) => conn.write(now_ns, id, len, prio),
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host: runs connections.
    Host,
    /// A router: forwards by its static routes.
    Router,
}

/// A node.
#[derive(Clone, Debug)]
pub struct Node {
    /// Name from the scenario.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
}

/// Nodes, links and static routes.
#[derive(Debug, Default)]
pub struct Network {
    /// Nodes, indexed by node address.
    pub nodes: Vec<Node>,
    /// One-way links.
    pub links: Vec<Link>,
    /// Each node's outgoing link towards each destination, from shortest paths by hop
    /// count.
    routes: Vec<Routes>,
}

/// A node's routing table.
#[derive(Clone, Debug, Default)]
enum Routes {
    /// No destination is reachable (before [`Network::compute_routes`]).
    #[default]
    None,
    /// Every other node is reached through this one link: a host with a single interface,
    /// which is most nodes of a large topology (a 512-pair dumbbell has 1,024 hosts and
    /// 2 routers). A full table per host would be 8 bytes times the node count for each
    /// (33 MB at 2,050 nodes), and a lookup per packet-hop a cache miss in it.
    Uniform(u32),
    /// `table[dst]` = outgoing link, [`NO_ROUTE`] where none: 4 bytes a destination (an
    /// `Option<u32>` took 8), so a router's table of a 512-pair dumbbell is 4 KiB and a
    /// line of it serves 16 destinations; a router looks it up at every packet-hop.
    Table(Box<[u32]>),
}

/// A routing table's entry for a destination it does not reach (no link has this index:
/// a network holds far fewer links).
const NO_ROUTE: u32 = u32::MAX;

impl Network {
    /// Adds a node and returns its address.
    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> u32 {
        self.nodes.push(Node { name: name.to_string(), kind });
        (self.nodes.len() - 1) as u32
    }

    /// Looks a node up by name.
    pub fn node(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }

    /// Adds a one-way link and returns its index.
    pub fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        (self.links.len() - 1) as u32
    }

    /// Computes static routes: breadth-first shortest paths by hop count from every node;
    /// ties go to the link added first, so routes are deterministic. Hosts do not forward.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            out[l.from as usize].push(i as u32);
        }
        self.routes = vec![Routes::None; n];
        let mut first: Vec<Option<u32>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut q = VecDeque::new();
        // Routers (and hosts with other than one link to a router) first, by BFS; then a
        // host with one link to a router, whose table is that router's plus the router
        // itself: the BFS from the host takes the link, then expands the router exactly as
        // the router's own BFS does (hosts are never expanded, so the host being seen
        // changes nothing else). When that reaches every other node the table is uniform.
        let single = |src: usize| match out[src].as_slice() {
            [li] if self.nodes[src].kind == NodeKind::Host => {
                let to = self.links[*li as usize].to as usize;
                (to != src && self.nodes[to].kind != NodeKind::Host).then_some((*li, to))
            }
            _ => None,
        };
        for src in 0..n {
            if single(src).is_some() {
                continue;
            }
            // BFS recording the first link taken from src.
            first.fill(None);
            seen.fill(false);
            seen[src] = true;
            q.clear();
            for &li in &out[src] {
                let to = self.links[li as usize].to as usize;
                if !seen[to] {
                    seen[to] = true;
                    first[to] = Some(li);
                    q.push_back(to);
                }
            }
            while let Some(u) = q.pop_front() {
                if self.nodes[u].kind == NodeKind::Host {
                    continue;
                }
                for &li in &out[u] {
                    let to = self.links[li as usize].to as usize;
                    if !seen[to] {
                        seen[to] = true;
                        first[to] = first[u];
                        q.push_back(to);
                    }
                }
            }
            self.routes[src] = Routes::Table(first.iter().map(|l| l.unwrap_or(NO_ROUTE)).collect());
        }
        // How many nodes each router reaches (its table's entries), to tell a uniform host
        // table in constant time.
        let reached: Vec<usize> = self
            .routes
            .iter()
            .map(|r| match r {
                Routes::Table(t) => t.iter().filter(|&&l| l != NO_ROUTE).count(),
                _ => 0,
            })
            .collect();
        for src in 0..n {
            let Some((li, router)) = single(src) else { continue };
            let Routes::Table(via) = &self.routes[router] else { unreachable!("a router has a table") };
            // Every node but `src` and `router` in the router's table (which never holds the
            // router itself), and `router` through the link.
            let others = reached[router] - usize::from(via[src] != NO_ROUTE);
            self.routes[src] = if others + 2 == n {
                Routes::Uniform(li)
            } else {
                let reach = |dst: usize| dst != src && (dst == router || via[dst] != NO_ROUTE);
                Routes::Table((0..n).map(|dst| if reach(dst) { li } else { NO_ROUTE }).collect())
            };
        }
    }

    /// The link `node` uses towards `dst`.
    #[inline]
    pub fn route(&self, node: u32, dst: u32) -> Option<u32> {
        match self.routes.get(node as usize)? {
            Routes::Uniform(l) => (dst != node && (dst as usize) < self.nodes.len()).then_some(*l),
            Routes::Table(t) => t.get(dst as usize).copied().filter(|&l| l != NO_ROUTE),
            Routes::None => None,
        }
    }
}

/// A flow: one connection between a client (which opens it) and a server, with an
/// application on each end.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Name for reports.
    pub name: String,
    /// Node that opens the connection.
    pub client: u32,
    /// Node that accepts it.
    pub server: u32,
    /// When the client opens the connection.
    pub start_ns: u64,
    /// Transport settings of the client end.
    pub client_transport: ConnectionConfig,
    /// Transport settings of the server end.
    pub server_transport: ConnectionConfig,
    /// What the client writes.
    pub client_app: AppSpec,
    /// What the server writes.
    pub server_app: AppSpec,
    /// Multipath (QUIC mode): the (client, server) interface nodes of each path after the
    /// first (path 0 is `client` to `server`). The client opens them once the handshake is
    /// confirmed; a page-loading client requests its page once every path is validated (the
    /// PriorityBucket reproduction's PB-18: the load starts on an established multipath
    /// connection).
    pub extra_paths: Vec<(u32, u32)>,
}

fn spec_default_priority(spec: &FlowSpec, side: usize) -> u8 {
    if side == 1 {
        spec.server_transport.default_priority
    } else {
        spec.client_transport.default_priority
    }
}

/// Per-end application state.
#[derive(Debug, Default)]
struct AppState {
    messages: Vec<MessageSpec>,
    /// The page, for a page-loading client or a web server (reactive applications).
    page: Option<Arc<PageLoad>>,
    /// Responses received, for a page-loading client.
    responses: usize,
    /// A page-loading client: objects it is done with (complete, or given up incomplete),
    /// and unreliable objects whose response ended (HEADERS and FIN on the request stream).
    done: Vec<bool>,
    ended: Vec<bool>,
    /// What had arrived of each unreliable object when the client gave it up (later chunks
    /// are of no use to the page and do not count as received).
    given_up: std::collections::BTreeMap<u32, Option<triage_core::quic::DatagramObject>>,
    /// Index into the recorder's messages of this end's first message.
    record_base: usize,
    written: usize,
    connected_ns: Option<u64>,
    /// Multipath: paths (after the first) validated or failed so far.
    paths_settled: std::collections::BTreeSet<u32>,
    /// A page-loading client with a connection pool ([`crate::app::BrowserModel`]).
    pool: Option<Pool>,
    /// A page-loading client: when it asked for each object (discovery), which precedes the
    /// request's write while its connection is being set up.
    discovered_ns: Vec<Option<u64>>,
    /// A page-loading client: when each object was processed (its main-thread tasks done;
    /// its arrival without a CPU model).
    processed_ns: Vec<Option<u64>>,
    /// A page-loading client: when each object was found, its parent having arrived (an
    /// HTML document's children then, or with streaming discovery once the bytes before them
    /// arrived; a script's or stylesheet's once processed). A child found while its parent
    /// was still arriving is skipped when the parent completes.
    found_ns: Vec<Option<u64>>,
    /// A page-loading client: each object's request is scheduled.
    child_scheduled: Vec<bool>,
    /// The main thread (CPU model): the tasks it ran (start, length), in order; it is busy
    /// until the last one ends.
    main_tasks: Vec<(u64, crate::app::MainTask)>,
    peer_closed: bool,
    closed: bool,
}

/// The connections of a page load that uses a pool (one per group of
/// [`crate::app::BrowserModel`]).
#[derive(Debug, Default)]
struct Pool {
    /// Per group: its connection, once opened.
    conn: Vec<Option<u32>>,
    /// Per group: its opening is scheduled (the DNS lookup is under way or done).
    opening: Vec<bool>,
    /// Per group: requests may be written (connected, and TLS done where it runs).
    ready: Vec<bool>,
    /// Per group: requests waiting for the connection (or, HTTP/1.1, for the response in
    /// flight).
    waiting: Vec<std::collections::VecDeque<u32>>,
    /// Per group, HTTP/1.1: the request whose response is in flight.
    busy: Vec<Option<u32>>,
    /// Per host: when its DNS lookup is (or was) done.
    dns_done_ns: std::collections::BTreeMap<String, u64>,
    /// Chrome's throttling ([`crate::app::BrowserModel::throttle`]): delayable requests
    /// held back, in request order; delayable and layout-blocking requests in flight.
    throttled: std::collections::VecDeque<u32>,
    delayable_in_flight: usize,
    layout_blocking_in_flight: usize,
}

impl Pool {
    /// Chrome's limit of delayable requests in flight now: 1 in tight mode (a
    /// layout-blocking request in flight), else 10.
    fn delayable_limit(&self) -> usize {
        if self.layout_blocking_in_flight > 0 {
            BrowserModel::MAX_DELAYABLE_WHILE_LAYOUT_BLOCKING
        } else {
            BrowserModel::MAX_DELAYABLE_IN_FLIGHT
        }
    }

    fn new(groups: usize) -> Pool {
        Pool {
            conn: vec![None; groups],
            opening: vec![false; groups],
            ready: vec![false; groups],
            waiting: vec![std::collections::VecDeque::new(); groups],
            busy: vec![None; groups],
            dns_done_ns: Default::default(),
            throttled: Default::default(),
            delayable_in_flight: 0,
            layout_blocking_in_flight: 0,
        }
    }
}

/// Message ids of the TLS 1.3 handshake on a pooled page-load connection (never ids of page
/// objects, which count from 0).
const TLS_CLIENT_HELLO: u32 = u32::MAX - 1;
const TLS_SERVER_FLIGHT: u32 = u32::MAX - 2;

/// Client port of a pooled page-load connection `g` ≥ 1 (group 0 uses the flow's port): the
/// server port (80 + flow) already makes the address pair unique among flows.
const POOL_PORT_BASE: u16 = 1024;
/// The most connections one page load opens (ports 1025 to 39999).
pub const MAX_PAGE_CONNECTIONS: usize = (CLIENT_PORT_BASE - POOL_PORT_BASE) as usize - 1;

#[derive(Debug)]
struct FlowState {
    spec: FlowSpec,
    client_conn: Option<u32>,
    server_conn: Option<u32>,
    apps: [AppState; 2],
    completed_ns: Option<u64>,
    remaining_messages: usize,
    /// The client's and the server's settings as their connections take them: one copy
    /// shared with the flows added before with equal settings (TCP mode; `None` in QUIC
    /// mode, whose connections each take a copy of their own). Decided when the flow is
    /// added ([`share_ends`]), not when its connections open: comparing a
    /// flow's settings reads them, and with hundreds of flows opening at once those reads
    /// missed the cache for each connection (the settings are 688 bytes).
    shared: [Option<Arc<ConnectionConfig>>; 2],
}

/// A connection and what the simulator keeps beside it. Connection `c` is `conns[c]`, and
/// its time series in the recorder is `recorder.conn_series[c]` (both are pushed together,
/// in `add_conn`, and neither is ever removed).
#[derive(Debug)]
struct ConnSlot {
    conn: Endpoint,
    flow: u32,
    is_server: bool,
    /// TCP mode (whose timers are its only time-driven actions; see `deadline`).
    tcp: bool,
    /// When the pending `ConnTimer` event of this connection is due (`u64::MAX`: none).
    timer_at: u64,
    /// The connection's earliest deadline as the end of its last `service` read it
    /// (`u64::MAX`: none). Every input that can move a deadline is followed by a
    /// `service`, so this is the connection's own: a `ConnTimer` event due before it (the
    /// deadline moved later since the event was scheduled, as an RTO does on every ACK)
    /// finds nothing to do, and in TCP mode is re-armed without touching the connection,
    /// which with many flows has left the cache by then.
    deadline: u64,
    last_state: &'static str,
    /// A pooled page load's client connection: its group (0 otherwise).
    group: u32,
}

/// Simulator-wide counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Events processed.
    pub events: u64,
    /// Packets serialized onto links (one per packet per hop).
    pub packet_hops: u64,
    /// Packets a node could not route.
    pub unroutable_packets: u64,
    /// Packets that reached a host with no matching connection or listener.
    pub no_socket_packets: u64,
    /// Times a connection reported a message complete that was complete already (a
    /// transport that delivered something twice to the application; 0 in a correct run).
    pub repeated_completions: u64,
    /// Connection-timer events that found their connection's deadline moved later since
    /// they were scheduled and were re-armed for it without running the connection (TCP
    /// mode; not in any report: the run is the same either way, only faster).
    pub early_timers: u64,
}

/// Results of one flow.
#[derive(Clone, Debug)]
pub struct FlowResult {
    /// Flow name.
    pub name: String,
    /// Completion: when the last message (both directions) was complete, if it was.
    pub completed_ns: Option<u64>,
    /// Flow start.
    pub start_ns: u64,
    /// Application bytes written by both ends.
    pub bytes: u64,
    /// Segments retransmitted by both ends.
    pub retransmitted_segments: u64,
    /// Retransmission timeouts at both ends.
    pub rto_count: u64,
    /// Fast recoveries at both ends.
    pub fast_recoveries: u64,
    /// Per-end counters: client, server (summed over a pooled page load's connections).
    pub conn_stats: [triage_core::ConnectionStats; 2],
    /// Connections the client opened (0 before the flow starts; several for a pooled page
    /// load).
    pub connections: u32,
}

/// The simulator.
#[derive(Debug)]
pub struct Simulator {
    now_ns: u64,
    events: EventQueue,
    net: Network,
    flows: Vec<FlowState>,
    conns: Vec<ConnSlot>,
    demux: HashMap<(Addr, Addr), u32, AddrHash>,
    /// Per node, the last (destination, source) pair `demux` resolved there and its
    /// connection: a host's packets mostly belong to the connection of the packet before
    /// (one flow per host pair in a dumbbell), and comparing two addresses is cheaper than
    /// hashing them. The same answer as `demux`: an entry is dropped when its pair is
    /// inserted again.
    demux_last: Vec<Option<(Addr, Addr, u32)>>,
    /// Entries `demux` is sized for (two per flow and path, counted as flows are added).
    demux_entries: usize,
    listeners: HashMap<Addr, u32, AddrHash>,
    recorder: Recorder,
    sample_interval_ns: u64,
    packet_trace: bool,
    stats: SimStats,
    /// Packets a connection sent, between draining it and forwarding them.
    pending: Vec<SimPacket>,
    /// The events a connection reported, between draining it and handing them to its
    /// application (kept, like `pending`, so that draining allocates nothing).
    conn_events: Vec<Event>,
    capture: Option<Box<crate::pcap::Capture>>,
    /// The first `Sample` event is scheduled (by the first call of `run`).
    sampling: bool,
    /// The run ended with every flow done: a later call of `run` does nothing.
    finished: bool,
    /// Boxes of packets delivered to their host, reused for the next packets sent (a free
    /// list, as htsim recycles its packets): in steady state a packet-hop allocates nothing.
    #[allow(clippy::vec_box)] // the boxes themselves are what is recycled
    free_packets: Vec<Box<crate::queue::Carried>>,
    /// Connection settings shared by the connections opened with them ([`share_ends`]),
    /// the latest last.
    shared_configs: Vec<Arc<ConnectionConfig>>,
}

/// The copies of a flow's client and server settings (without their seeds) that the
/// connections opened with them share ([`FlowState::shared`]): each one of the last few
/// distinct settings in `shared` (the latest last), or a new one kept there. `None` for a
/// QUIC-mode end, whose connection takes a copy of its own.
fn share_ends(shared: &mut Vec<Arc<ConnectionConfig>>, spec: &FlowSpec) -> [Option<Arc<ConnectionConfig>>; 2] {
    [&spec.client_transport, &spec.server_transport].map(|cfg| {
        if cfg.mode == triage_core::TransportMode::Quic {
            return None;
        }
        let unseeded = ConnectionConfig { seed: 0, ..cfg.clone() };
        if let Some(kept) = shared.iter().rev().find(|c| ***c == unseeded) {
            return Some(Arc::clone(kept));
        }
        let new = Arc::new(unseeded);
        if shared.len() == SHARED_CONFIGS {
            shared.remove(0);
        }
        shared.push(Arc::clone(&new));
        Some(new)
    })
}

/// The most distinct connection settings [`share_ends`] compares a new flow's
/// with (a flow's client and server usually differ, and a scenario's flows
/// mostly share a few kinds).
const SHARED_CONFIGS: usize = 4;

/// The most boxes kept for reuse: enough for every packet in flight in large scenarios,
/// bounded so that a burst does not pin its memory for the rest of the run.
const MAX_FREE_PACKETS: usize = 1 << 16;

/// The hasher of the connection demultiplexer, looked up once per packet a host receives:
/// the core's integer hasher (Fx). Lookups only: nothing iterates these maps, so no output
/// depends on the hash.
type AddrHash = std::hash::BuildHasherDefault<triage_core::intmap::IntHasher>;

const SERVER_PORT: u16 = 80;
const CLIENT_PORT_BASE: u16 = 40000;

/// The most flows one simulator holds: flow `f` connects from client port 40000 + `f` to
/// server port 80 + `f`, so every flow has an address pair of its own.
pub const MAX_FLOWS: usize = (u16::MAX - CLIENT_PORT_BASE) as usize + 1;

/// Flow `f`'s (client, server) ports.
fn flow_ports(f: u32) -> (u16, u16) {
    let f = u16::try_from(f).ok().filter(|&f| usize::from(f) < MAX_FLOWS);
    let f = f.unwrap_or_else(|| panic!("a simulator holds at most {MAX_FLOWS} flows"));
    (CLIENT_PORT_BASE + f, SERVER_PORT + f)
}

impl Simulator {
    /// A simulator over `net`; `sample_interval_ns` of 0 records no time series.
    pub fn new(mut net: Network, sample_interval_ns: u64) -> Self {
        net.compute_routes();
        let links = net.links.len();
        let nodes = net.nodes.len();
        Self {
            now_ns: 0,
            events: EventQueue::new(),
            net,
            flows: Vec::new(),
            conns: Vec::new(),
            demux: HashMap::default(),
            demux_last: vec![None; nodes],
            demux_entries: 0,
            listeners: HashMap::default(),
            recorder: Recorder { queue_series: vec![Vec::new(); links], ..Default::default() },
            sample_interval_ns,
            packet_trace: false,
            stats: SimStats::default(),
            pending: Vec::new(),
            conn_events: Vec::new(),
            capture: None,
            sampling: false,
            finished: false,
            free_packets: Vec::new(),
            shared_configs: Vec::new(),
        }
    }

    /// Record every packet put on or dropped at a link (off by default: it costs memory).
    pub fn set_packet_trace(&mut self, on: bool) {
        self.packet_trace = on;
    }

    /// Write every packet links carry or drop to `capture` (call after adding the flows, so
    /// that each SYN announces its end's MSS).
    pub fn set_capture(&mut self, mut capture: crate::pcap::Capture) {
        for (f, flow) in self.flows.iter().enumerate() {
            let (client_port, server_port) = flow_ports(f as u32);
            let s = &flow.spec;
            capture.set_mss(Addr { node: s.client, port: client_port }, s.client_transport.mss_bytes);
            capture.set_mss(Addr { node: s.server, port: server_port }, s.server_transport.mss_bytes);
        }
        self.capture = Some(Box::new(capture));
    }

    /// Takes the capture back (to [`finish`](crate::pcap::Capture::finish) it).
    pub fn take_capture(&mut self) -> Option<crate::pcap::Capture> {
        self.capture.take().map(|c| *c)
    }

    /// Keep a qlog trace at both ends of every QUIC-mode flow (call before [`run`](Self::run)).
    pub fn set_qlog(&mut self, on: bool) {
        for f in &mut self.flows {
            f.spec.client_transport.quic.qlog = on;
            f.spec.server_transport.quic.qlog = on;
        }
        // The shared copies follow (a TCP-mode flow's settings carry the QUIC part too).
        self.shared_configs.clear();
        for f in &mut self.flows {
            f.shared = share_ends(&mut self.shared_configs, &f.spec);
        }
    }

    /// The qlog traces kept: (flow name, server end?, trace), in flow order, client first.
    pub fn qlog_traces(&self) -> Vec<(&str, bool, &triage_core::qlog::Trace)> {
        let mut out = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            for server in [false, true] {
                if let Some(t) = self.endpoint(i as u32, server).and_then(|e| e.quic()).and_then(|q| q.qlog_trace()) {
                    out.push((f.spec.name.as_str(), server, t));
                }
            }
        }
        out
    }

    /// Adds a flow; returns its index.
    ///
    /// # Panics
    ///
    /// When the simulator already holds [`MAX_FLOWS`] flows (scenario files are checked
    /// against the limit before this).
    pub fn add_flow(&mut self, spec: FlowSpec) -> u32 {
        let id = self.flows.len() as u32;
        let (_, server_port) = flow_ports(id);
        let mut apps: [AppState; 2] = Default::default();
        let mut remaining = 0;
        for (side, app) in [(0usize, &spec.client_app), (1, &spec.server_app)] {
            let msgs = app.messages();
            apps[side].record_base = self.recorder.messages.len();
            for m in &msgs {
                self.recorder.messages.push(MessageRecord {
                    flow: id,
                    from_server: side == 1,
                    name: m.name.clone(),
                    bytes: m.bytes,
                    priority: m.priority.unwrap_or(spec_default_priority(&spec, side)),
                    written_ns: None,
                    first_byte_ns: None,
                    completed_ns: None,
                    received_priority: None,
                    discarded: None,
                });
            }
            remaining += msgs.iter().filter(|m| m.bytes > 0).count();
            apps[side].messages = msgs;
            apps[side].page = match app {
                AppSpec::PageClient(p) | AppSpec::PageServer(p) => Some(p.clone()),
                _ => None,
            };
            if let AppSpec::PageClient(p) = app {
                apps[side].done = vec![false; p.page.len()];
                apps[side].ended = vec![false; p.page.len()];
                apps[side].discovered_ns = vec![None; p.page.len()];
                apps[side].processed_ns = vec![None; p.page.len()];
                apps[side].found_ns = vec![None; p.page.len()];
                apps[side].child_scheduled = vec![false; p.page.len()];
                if p.browser.pooled() {
                    apps[side].pool = Some(Pool::new(p.browser.groups.len()));
                }
            }
        }
        let server_addr = Addr { node: spec.server, port: server_port };
        self.listeners.insert(server_addr, id);
        self.events.push(spec.start_ns, Ev::FlowStart(id));
        let shared = share_ends(&mut self.shared_configs, &spec);
        self.flows.push(FlowState {
            spec,
            client_conn: None,
            server_conn: None,
            apps,
            completed_ns: None,
            remaining_messages: remaining,
            shared,
        });
        // Room for each flow's two connections (client and server) before the run: a
        // connection table that grows while flows open moves every connection it holds
        // (1,600 bytes or more each) into new memory each time it doubles.
        let conns = 2 * self.flows.len();
        self.conns.reserve(conns.saturating_sub(self.conns.len()));
        self.recorder.conn_series.reserve(conns.saturating_sub(self.recorder.conn_series.len()));
        // And the demultiplexing table's entries for them (one per end and path), so that
        // it does not rehash every entry while the flows open.
        let paths = 1 + self.flows[id as usize].spec.extra_paths.len();
        self.demux_entries += 2 * paths;
        self.demux.reserve(self.demux_entries.saturating_sub(self.demux.len()));
        id
    }

    /// The network.
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Current simulated time.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Per-path counters of flow `f`'s client and server connections (QUIC mode; empty
    /// vectors in TCP mode or for an end that never existed).
    pub fn flow_path_stats(&self, f: usize) -> [Vec<triage_core::quic::PathStats>; 2] {
        let stats = |c: Option<u32>| c.map_or_else(Vec::new, |c| self.conns[c as usize].conn.path_stats());
        match self.flows.get(f) {
            Some(flow) => [stats(flow.client_conn), stats(flow.server_conn)],
            None => [Vec::new(), Vec::new()],
        }
    }

    /// Flow `f` as it was added.
    pub fn flow_spec(&self, f: usize) -> Option<&FlowSpec> {
        self.flows.get(f).map(|flow| &flow.spec)
    }

    /// Simulator counters.
    pub fn stats(&self) -> &SimStats {
        &self.stats
    }

    /// Measurements.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Runs until every flow has completed and closed, nothing is pending, or `stop_ns`.
    /// `progress` is called now and then with the simulated time. A run may be continued
    /// by calling `run` again with a later `stop_ns` (the benchmark does, to count what the
    /// second half costs): the events are the same as those of one call, and once every
    /// flow is done a further call does nothing. Kept out of line (it is called once or
    /// twice per run), so that a profiler can collect the run loop alone
    /// (`valgrind --tool=callgrind --toggle-collect='*Simulator::run*'`).
    #[inline(never)]
    pub fn run(&mut self, stop_ns: u64, mut progress: impl FnMut(u64)) {
        if self.finished {
            return;
        }
        if self.sample_interval_ns > 0 && !self.sampling {
            self.sampling = true;
            self.events.push(0, Ev::Sample);
        }
        let mut ticks = 0u32;
        while let Some((t, ev)) = self.events.pop_until(stop_ns) {
            self.now_ns = t;
            self.stats.events += 1;
            self.dispatch(ev);
            ticks = ticks.wrapping_add(1);
            if ticks & 0xFFFF == 0 {
                progress(self.now_ns);
            }
            if matches!(ev, Ev::Sample) && self.all_done() {
                self.finished = true;
                break;
            }
        }
        progress(self.now_ns);
    }

    fn all_done(&self) -> bool {
        self.flows.iter().all(|f| f.completed_ns.is_some())
            && self.conns.iter().all(|c| c.conn.state() == triage_core::State::Closed)
    }

    /// Runs one event. The packet path's two events (most of a run) are handled here, in
    /// the run loop, without a call; the others, and a packet's delivery to its host, are
    /// calls of their own, so that the loop stays small.
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::LinkTxDone(l) => {
                self.stats.packet_hops += 1;
                let link = &mut self.net.links[l as usize];
                let (deliver, next) = match self.capture.as_deref_mut() {
                    None => link.on_tx_done(self.now_ns),
                    Some(cap) => cap.tx_done(self.now_ns, l, link),
                };
                // Nothing new to deliver: the packet may have been lost, and its box comes
                // back.
                if let Some(b) = deliver.is_none().then(|| link.take_lost()).flatten() {
                    self.keep_box(b);
                }
                match (deliver, next) {
                    // The sooner first: when the event just handed out came from the heap, it
                    // takes that event's place near the root, and the later one then joins
                    // the run or rises from the bottom only a little (the other order sifts
                    // the later one down the whole heap).
                    // Order-preserving: at different times their push order decides nothing,
                    // and any other event is pushed before or after both.
                    (Some(d), Some(n)) if n < d => {
                        self.events.push_link(n, l, false);
                        self.events.push_link(d, l, true);
                    }
                    _ => {
                        if let Some(t) = deliver {
                            self.events.push_link(t, l, true);
                        }
                        if let Some(t) = next {
                            self.events.push_link(t, l, false);
                        }
                    }
                }
            }
            Ev::LinkDeliver(l) => {
                let link = &mut self.net.links[l as usize];
                let to = link.to;
                let (p, next) = link.on_deliver(self.now_ns);
                if let Some(t) = next {
                    self.events.push_link(t, l, true);
                }
                if let Some(p) = p {
                    self.arrive(to, p);
                }
            }
            other => self.dispatch_other(other),
        }
    }

    /// Runs an event off the packet path (see [`dispatch`](Self::dispatch)).
    #[inline(never)]
    fn dispatch_other(&mut self, ev: Ev) {
        match ev {
            Ev::LinkTxDone(_) | Ev::LinkDeliver(_) => unreachable!("handled by dispatch"),
            Ev::ConnTimer(c) => {
                let slot = &mut self.conns[c as usize];
                if slot.timer_at != self.now_ns {
                    return;
                }
                if slot.tcp && slot.deadline > self.now_ns {
                    // Early: nothing is due, and handling the timeout would do nothing.
                    debug_assert_eq!(
                        slot.conn.poll_timeout().map_or(u64::MAX, |d| d.max(self.now_ns)),
                        slot.deadline,
                        "every change of a deadline is followed by a service"
                    );
                    self.stats.early_timers += 1;
                    slot.timer_at = u64::MAX;
                    self.arm_timer(c);
                    return;
                }
                slot.timer_at = u64::MAX;
                slot.conn.handle_timeout(self.now_ns);
                self.service(c);
            }
            Ev::FlowStart(f) => self.start_flow(f),
            Ev::AppWrite(f, side) => self.app_write_due(f, side as usize),
            Ev::PageRequest(f, k) => {
                self.page_request(f, k);
                if self.flows[f as usize].apps[0].pool.is_none() {
                    if let Some(c) = self.flows[f as usize].client_conn {
                        self.service(c);
                    }
                }
            }
            Ev::PoolOpen(f, g) => self.pool_open(f, g),
            Ev::ServerRespond(f, c, k) => {
                self.server_respond(f, c, k as usize);
                self.service(c);
            }
            Ev::PartialCheck(f, k) => self.partial_check(f, k),
            Ev::Sample => {
                self.sample();
                self.events.push(self.now_ns.saturating_add(self.sample_interval_ns), Ev::Sample);
            }
        }
    }

    fn start_flow(&mut self, f: u32) {
        if self.flows[f as usize].apps[0].pool.is_some() {
            // A browser with a connection pool: the root's request opens its connection, once
            // the navigation's redirect hops are done.
            let stall = self.flows[f as usize].apps[0]
                .page
                .as_ref()
                .and_then(|p| p.browser.stall_ns.first().copied())
                .unwrap_or(0);
            match self.navigation_redirects_ns(f).saturating_add(stall) {
                0 => self.page_request(f, 0),
                t => self.events.push(self.now_ns.saturating_add(t), Ev::PageRequest(f, 0)),
            }
            return;
        }
        let (cfg, seed) = self.shared_config(f, false);
        let flow = &self.flows[f as usize];
        let (client_port, server_port) = flow_ports(f);
        let local = Addr { node: flow.spec.client, port: client_port };
        let remote = Addr { node: flow.spec.server, port: server_port };
        let mut conn = Endpoint::connect_seeded(cfg, seed, local, remote);
        for &(c, s) in &flow.spec.extra_paths {
            conn.add_path(Addr { node: c, port: client_port }, Addr { node: s, port: server_port });
        }
        let id = self.add_conn(conn, f, false);
        self.flows[f as usize].client_conn = Some(id);
        self.service(id);
    }

    /// The settings flow `f`'s client (or server) connections open with, as one copy shared
    /// with the connections opened before with equal settings (the last few distinct ones
    /// are kept), and the seed of their controllers' random streams: with many flows alike,
    /// every connection reads the same settings, which stay in the cache, instead of 664
    /// bytes of its own. The seed is compared apart and handed over apart
    /// ([`Endpoint::connect_seeded`]): a scenario gives each flow a seed of its own, which
    /// made every flow's settings differ and none shared. The copy is chosen when the flow
    /// is added (`FlowState::shared`; again by [`set_qlog`](Self::set_qlog), which changes
    /// the settings). QUIC mode keeps a copy of its own ([`Endpoint::connect`]): its
    /// settings are handed over unshared, so that the connection takes them without another
    /// copy. Out of line: a connection opens once, and inlined into the packet path's
    /// delivery (a server's connection opens there) this took room in its code.
    #[inline(never)]
    fn shared_config(&self, f: u32, server: bool) -> (Arc<ConnectionConfig>, u64) {
        let flow = &self.flows[f as usize];
        let cfg = if server { &flow.spec.server_transport } else { &flow.spec.client_transport };
        match &flow.shared[server as usize] {
            Some(shared) => (Arc::clone(shared), cfg.seed),
            None => (Arc::new(cfg.clone()), cfg.seed),
        }
    }

    fn add_conn(&mut self, conn: Endpoint, flow: u32, is_server: bool) -> u32 {
        let id = self.conns.len() as u32;
        self.demux_insert(conn.local(), conn.remote(), id);
        // Every path of the flow reaches this connection (a real stack finds it by the
        // connection ID of the path).
        let (client_port, server_port) = flow_ports(flow);
        for i in 0..self.flows[flow as usize].spec.extra_paths.len() {
            let (c, s) = self.flows[flow as usize].spec.extra_paths[i];
            let (c, s) = (Addr { node: c, port: client_port }, Addr { node: s, port: server_port });
            let (local, remote) = if is_server { (s, c) } else { (c, s) };
            self.demux_insert(local, remote, id);
        }
        debug_assert_eq!(self.recorder.conn_series.len(), id as usize, "series c is connection c's");
        self.recorder.conn_series.push(ConnSeries { flow, is_server, ..Default::default() });
        let state = conn.cc_state().1;
        self.recorder.state_changes.push((id as usize, self.now_ns, state));
        let tcp = matches!(conn, Endpoint::Tcp(_));
        self.conns.push(ConnSlot {
            conn,
            flow,
            is_server,
            tcp,
            timer_at: u64::MAX,
            deadline: u64::MAX,
            last_state: state,
            group: 0,
        });
        id
    }

    /// A packet reaches `node`: forward it or hand it to the host's connection.
    #[inline(always)]
    fn arrive(&mut self, node: u32, sp: SimPacket) {
        if sp.dst_node() != node {
            self.forward(node, sp);
            return;
        }
        self.deliver_to_host(sp);
    }

    /// A packet reaches its destination host: its connection takes it (or a listener opens
    /// one for it).
    #[inline(never)]
    fn deliver_to_host(&mut self, sp: SimPacket) {
        let origin_ns = sp.origin_ns();
        let pkt = sp.pkt;
        if let Some(c) = self.find_conn(pkt.dst, pkt.src) {
            if pkt.payload_bytes > 0 || pkt.quic.is_some() {
                // One-way delay of data packets, per receiving end.
                let series = &mut self.recorder.conn_series[c as usize];
                series.rx_data_packets += 1;
                series.rx_delay_total_ns += self.now_ns - origin_ns;
            }
            self.conns[c as usize].conn.handle_packet(self.now_ns, &pkt);
            self.keep_box(pkt);
            self.service(c);
            return;
        }
        let opens = match &pkt.quic {
            Some(q) => q.is_initial(),
            None => pkt.flags.has(TcpFlags::SYN) && !pkt.flags.has(TcpFlags::ACK),
        };
        if opens {
            if let Some(&f) = self.listeners.get(&pkt.dst) {
                let (cfg, seed) = self.shared_config(f, true);
                if let Some(conn) = Endpoint::accept_seeded(cfg, seed, self.now_ns, &pkt) {
                    let id = self.add_conn(conn, f, true);
                    // A pooled page load opens several: the first stands for the flow.
                    self.flows[f as usize].server_conn.get_or_insert(id);
                    self.keep_box(pkt);
                    self.service(id);
                    return;
                }
            }
        }
        self.stats.no_socket_packets += 1;
        self.keep_box(pkt);
    }

    /// A packet's box, done with, kept for a later packet (up to [`MAX_FREE_PACKETS`]).
    #[inline(always)]
    fn keep_box(&mut self, pkt: Box<crate::queue::Carried>) {
        if self.free_packets.len() < MAX_FREE_PACKETS {
            self.free_packets.push(pkt);
        }
    }

    /// The connection at `dst` talking to `src` (`demux`, through `demux_last`).
    #[inline(always)]
    fn find_conn(&mut self, dst: Addr, src: Addr) -> Option<u32> {
        let n = dst.node as usize;
        if let Some(Some((d, s, c))) = self.demux_last.get(n) {
            if *d == dst && *s == src {
                return Some(*c);
            }
        }
        let c = *self.demux.get(&(dst, src))?;
        if let Some(last) = self.demux_last.get_mut(n) {
            *last = Some((dst, src, c));
        }
        Some(c)
    }

    /// Adds `(local, remote)` -> `id` to the demultiplexer (replacing what it held).
    fn demux_insert(&mut self, local: Addr, remote: Addr, id: u32) {
        if let Some(last) = self.demux_last.get_mut(local.node as usize) {
            if last.is_some_and(|(d, s, _)| d == local && s == remote) {
                *last = None;
            }
        }
        self.demux.insert((local, remote), id);
    }

    #[inline(always)]
    fn forward(&mut self, node: u32, sp: SimPacket) {
        let Some(l) = self.net.route(node, sp.dst_node()) else {
            self.stats.unroutable_packets += 1;
            return;
        };
        if self.packet_trace {
            let before = self.net.links[l as usize].queue().stats().dropped_packets;
            let rec = packet_record(self.now_ns, l, &sp.pkt);
            match self.link_enqueue(l, sp) {
                Arrival::Starts(t) => self.events.push_link(t, l, false),
                Arrival::Queued => {}
                Arrival::Dropped => self.reclaim_dropped(l),
            }
            let dropped = self.net.links[l as usize].queue().stats().dropped_packets > before;
            self.recorder.packets.push(PacketRecord { event: if dropped { "drop" } else { "enqueue" }, ..rec });
            return;
        }
        match self.link_enqueue(l, sp) {
            Arrival::Starts(t) => self.events.push_link(t, l, false),
            Arrival::Queued => {}
            Arrival::Dropped => self.reclaim_dropped(l),
        }
    }

    /// The box of the packet link `l`'s queue just dropped, back to the free list (see
    /// [`Link::take_dropped`]): a lossy run then allocates no box per drop.
    #[cold]
    fn reclaim_dropped(&mut self, l: u32) {
        if let Some(b) = self.net.links[l as usize].take_dropped() {
            self.keep_box(b);
        }
    }

    /// Puts a packet into link `l`'s queue (through the capture, when there is one).
    #[inline(always)]
    fn link_enqueue(&mut self, l: u32, sp: SimPacket) -> Arrival {
        let link = &mut self.net.links[l as usize];
        match self.capture.as_deref_mut() {
            None => link.enqueue(self.now_ns, sp),
            Some(cap) => cap.enqueue(self.now_ns, l, link, sp),
        }
    }

    /// Drains a connection after an input: packets out, events to the application (which
    /// may write more), then its next timer.
    fn service(&mut self, c: u32) {
        loop {
            let slot = &mut self.conns[c as usize];
            let mut pending = std::mem::take(&mut self.pending);
            // Each packet is built in place in a recycled box (a new one only when none
            // is free).
            loop {
                let mut b = self.free_packets.pop().unwrap_or_default();
                if !slot.conn.poll_transmit_into(self.now_ns, &mut b.pkt) {
                    self.free_packets.push(b);
                    break;
                }
                pending.push(SimPacket::from_box(b, self.now_ns));
            }
            let mut events = std::mem::take(&mut self.conn_events);
            while let Some(e) = slot.conn.poll_event() {
                events.push(e);
            }
            let (flow, is_server) = (slot.flow, slot.is_server);
            for sp in pending.drain(..) {
                // A multi-homed host sends from the interface of the packet's path.
                let node = sp.pkt.src.node;
                self.forward(node, sp);
            }
            self.pending = pending;
            if events.is_empty() {
                self.conn_events = events;
                break;
            }
            // An application's answer may drain another connection (which then takes a
            // list of its own): this one is kept again once its events are handled.
            for e in events.drain(..) {
                self.on_app_event(flow, is_server, c, e);
            }
            self.conn_events = events;
        }
        let slot = &mut self.conns[c as usize];
        let state = slot.conn.cc_state().1;
        // The names are static strings: the same one is the same pointer, compared without
        // reading the bytes (most calls), and different pointers still compare by content.
        if !std::ptr::eq(state, slot.last_state) && state != slot.last_state {
            slot.last_state = state;
            self.recorder.state_changes.push((c as usize, self.now_ns, state));
        }
        slot.deadline = slot.conn.poll_timeout().map_or(u64::MAX, |d| d.max(self.now_ns));
        self.arm_timer(c);
    }

    /// Schedules connection `c`'s `ConnTimer` event for its `deadline` when that comes
    /// before the event pending (an event pending for a later time is left to find,
    /// when it runs, that it is not the slot's `timer_at`).
    #[inline(always)]
    fn arm_timer(&mut self, c: u32) {
        let slot = &mut self.conns[c as usize];
        if slot.deadline < slot.timer_at {
            slot.timer_at = slot.deadline;
            self.events.push(slot.deadline, Ev::ConnTimer(c));
        }
    }

    fn on_app_event(&mut self, f: u32, is_server: bool, c: u32, e: Event) {
        let side = is_server as usize;
        match e {
            Event::Connected if side == 0 && self.flows[f as usize].apps[0].pool.is_some() => {
                self.pool_connected(f, c);
            }
            Event::MessageComplete { msg_id: TLS_CLIENT_HELLO | TLS_SERVER_FLIGHT, .. }
            | Event::MessageStarted { msg_id: TLS_CLIENT_HELLO | TLS_SERVER_FLIGHT }
                if self.flows[f as usize].apps[side].page.as_ref().is_some_and(|p| p.browser.pooled()) =>
            {
                if let Event::MessageComplete { msg_id, .. } = e {
                    self.tls_message(f, side, c, msg_id);
                }
            }
            Event::PeerClosed
                if side == 1 && self.flows[f as usize].apps[1].page.as_ref().is_some_and(|p| p.browser.pooled()) =>
            {
                // A pooled page load's server connection: the browser closes each of its
                // connections once the page is loaded, with nothing left to answer.
                self.conns[c as usize].conn.close();
            }
            Event::Connected => {
                let start = self.flows[f as usize].spec.start_ns;
                let app = &mut self.flows[f as usize].apps[side];
                app.connected_ns = Some(self.now_ns);
                if app.page.is_some() {
                    // A browser requests the root document as soon as it is connected (on a
                    // multipath flow, once every path is validated: `PathValidated`).
                    if side == 0 && self.flows[f as usize].spec.extra_paths.is_empty() {
                        self.page_request(f, 0);
                    }
                    return;
                }
                // Messages due now are written at once; later ones get an event.
                let mut later = None;
                for m in app.messages.iter() {
                    if let Some(at) = m.at_ns {
                        if start.saturating_add(at) > self.now_ns {
                            later = Some(start.saturating_add(at));
                            break;
                        }
                    }
                }
                self.write_due(f, side, c);
                if let Some(t) = later {
                    self.events.push(t, Ev::AppWrite(f, side as u32));
                }
            }
            Event::MessageComplete { msg_id, .. }
                if self.flows[f as usize].apps[side].given_up.contains_key(&msg_id) =>
            {
                // The last chunks of an object the page client gave up on: it is done with it
                // already (not a repeated delivery).
            }
            Event::MessageComplete { msg_id, priority, .. } => self.message_complete(f, side, c, msg_id, priority),
            Event::MessageBytes { msg_id, bytes } => {
                if side == 0 {
                    self.page_stream(f, c, msg_id, bytes);
                }
            }
            Event::MessageStarted { msg_id } => {
                // The peer wrote it: the record belongs to the other side.
                let idx = self.flows[f as usize].apps[1 - side].record_base + msg_id as usize;
                if let Some(rec) = self.recorder.messages.get_mut(idx) {
                    rec.first_byte_ns.get_or_insert(self.now_ns);
                }
            }
            Event::ResponseEnded { msg_id } => {
                let app = &mut self.flows[f as usize].apps[side];
                let k = msg_id as usize;
                if app.page.is_some() && side == 0 && k < app.ended.len() && !app.done[k] {
                    app.ended[k] = true;
                    self.events.push(self.now_ns, Ev::PartialCheck(f, msg_id));
                }
            }
            Event::MessageDiscarded { msg_id, bytes, reason, .. } => {
                // This end wrote it and will not send (all of) it: it will never complete.
                let flow = &mut self.flows[f as usize];
                let idx = flow.apps[side].record_base + msg_id as usize;
                let rec = &mut self.recorder.messages[idx];
                if rec.discarded.is_none() {
                    rec.discarded = Some((reason, bytes, self.now_ns));
                    if rec.completed_ns.is_none() {
                        flow.remaining_messages -= 1;
                        if flow.remaining_messages == 0 {
                            flow.completed_ns = Some(self.now_ns);
                        }
                    }
                }
            }
            Event::PathValidated { path_id } | Event::PathFailed { path_id } => {
                // A page starts once every path is settled: validated, or given up (a path
                // that never answers must not hold the page back).
                let flow = &mut self.flows[f as usize];
                let extra = flow.spec.extra_paths.len();
                let app = &mut flow.apps[side];
                let first = app.paths_settled.insert(path_id);
                if first && side == 0 && app.page.is_some() && app.written == 0 && app.paths_settled.len() >= extra {
                    self.page_request(f, 0);
                }
            }
            Event::PeerClosed => {
                self.flows[f as usize].apps[side].peer_closed = true;
                self.maybe_close(f, side, c);
            }
            Event::Closed => {}
        }
    }

    /// The peer's message `msg_id` is complete at this end (or, for an unreliable page object,
    /// given up incomplete).
    fn message_complete(&mut self, f: u32, side: usize, c: u32, msg_id: u32, priority: Option<u8>) {
        self.on_page_message(f, side, c, msg_id);
        // The peer wrote it: the record belongs to the other side.
        let flow = &mut self.flows[f as usize];
        let idx = flow.apps[1 - side].record_base + msg_id as usize;
        let rec = &mut self.recorder.messages[idx];
        if rec.completed_ns.is_some() {
            self.stats.repeated_completions += 1;
        } else {
            rec.completed_ns = Some(self.now_ns);
            rec.received_priority = priority;
            if rec.discarded.is_none() {
                flow.remaining_messages -= 1;
            }
            if flow.remaining_messages == 0 {
                flow.completed_ns = Some(self.now_ns);
            }
        }
    }

    /// An unreliable object the page client waits for: give it up when its response ended
    /// and no chunk came for max(2·SRTT, 10 ms) (the reproduction's PR-3), or when its type's
    /// deadline from the request passed ([`triage_web::PartialConfig`]).
    fn partial_check(&mut self, f: u32, k: u32) {
        let Some(c) = self.flows[f as usize].client_conn else { return };
        let flow = &self.flows[f as usize];
        let app = &flow.apps[0];
        let (Some(page), ku) = (app.page.clone(), k as usize) else { return };
        if ku >= app.done.len() || app.done[ku] {
            return;
        }
        let request_ns = self.recorder.messages[app.record_base + ku].written_ns.unwrap_or(self.now_ns);
        let deadline = page.partial.deadline_ns(page.page.objects()[ku].kind).map(|d| request_ns.saturating_add(d));
        let conn = &self.conns[c as usize].conn;
        let arrived = conn.quic().and_then(|q| q.datagram_object(k));
        let give_up = if deadline.is_some_and(|d| d <= self.now_ns) {
            true
        } else if app.ended[ku] {
            let idle =
                page.end_idle_ns.unwrap_or_else(|| conn.srtt_ns().unwrap_or(0).saturating_mul(2).max(10_000_000));
            let at = arrived.map_or(0, |o| o.last_chunk_ns).saturating_add(idle);
            if at > self.now_ns {
                self.events.push(at, Ev::PartialCheck(f, k));
                false
            } else {
                true
            }
        } else {
            false
        };
        if give_up {
            self.flows[f as usize].apps[0].given_up.insert(k, arrived);
            self.message_complete(f, 0, c, k, None);
            self.service(c);
        }
    }

    /// Page loads: a server answers request `k` with object `k`; a client that received
    /// object `k` requests its children after the parent type's processing delay.
    fn on_page_message(&mut self, f: u32, side: usize, c: u32, k: u32) {
        let Some(page) = self.flows[f as usize].apps[side].page.clone() else { return };
        let k = k as usize;
        if k >= page.page.len() {
            return;
        }
        if side == 1 {
            let think_ns = page.browser.server_ns(k);
            if think_ns > 0 {
                self.events.push(self.now_ns.saturating_add(think_ns), Ev::ServerRespond(f, c, k as u32));
            } else {
                self.server_respond(f, c, k);
            }
            return;
        }
        let app = &mut self.flows[f as usize].apps[0];
        if app.done.get(k).copied().unwrap_or(true) {
            // Given up incomplete before its last chunk came in: already counted.
            return;
        }
        app.done[k] = true;
        app.responses += 1;
        let all = app.responses == page.page.len();
        if let Some(pool) = app.pool.as_mut().filter(|_| !page.page.objects()[k].from_cache) {
            // (A cache hit never went through the pool.)
            if page.browser.delayable(&page.page, k) {
                pool.delayable_in_flight -= 1;
            }
            if page.browser.layout_blocking(&page.page, k) {
                pool.layout_blocking_in_flight -= 1;
            }
            // HTTP/1.1: the connection is free for the next request.
            let g = page.browser.group_of[k] as usize;
            if pool.busy[g] == Some(k as u32) {
                pool.busy[g] = None;
                self.pool_flush(f, g);
            }
            self.release_throttled(f);
        }
        if page.sequential {
            // The thesis's client: the next object in page order, at once.
            if k + 1 < page.page.len() {
                self.events.push(self.now_ns, Ev::PageRequest(f, k as u32 + 1));
            }
        } else {
            // The main thread processes the object (CPU model): its tasks run once it has
            // arrived and the thread is free.
            let app = &mut self.flows[f as usize].apps[0];
            let busy_until = app.main_tasks.last().map_or(0, |&(start, task)| start.saturating_add(task.ns));
            let mut t = self.now_ns.max(busy_until);
            let tasks = page.browser.cpu_tasks.get(k).map_or(&[][..], |v| &v[..]);
            for &task in tasks {
                app.main_tasks.push((t, task));
                t = t.saturating_add(task.ns);
            }
            let processed = if tasks.is_empty() { self.now_ns } else { t };
            app.processed_ns[k] = Some(processed);
            let parent = &page.page.objects()[k];
            // An HTML document's children are found as it arrives (the preload scanner);
            // a script's or stylesheet's once it is processed.
            let found = if parent.kind == triage_web::ContentType::Html { self.now_ns } else { processed };
            for &child in page.page.children(parent.id) {
                let app = &mut self.flows[f as usize].apps[0];
                if app.found_ns[child.index()].is_some() {
                    // Streaming: found (and asked for) while its parent was arriving.
                    continue;
                }
                app.found_ns[child.index()] = Some(found);
                self.request_child(f, &page, child.index());
            }
            // Objects the recording shows waiting for this one (recorded gaps).
            for &child in page.gated_by.get(k).map_or(&[][..], |v| &v[..]) {
                self.request_child(f, &page, child as usize);
            }
        }
        if all {
            self.maybe_close(f, 0, c);
        }
    }

    /// Requests object `child` of a page load once it is found and, with recorded gaps, its
    /// gates ([`triage_web::RecordedGate`]) are processed (or given up): after the later of
    /// those, the discovery delay and its recorded stall.
    fn request_child(&mut self, f: u32, page: &PageLoad, child: usize) {
        let app = &mut self.flows[f as usize].apps[0];
        let Some(parent) = page.page.objects()[child].parent else { return };
        let Some(mut ready) = app.found_ns[child] else { return };
        if app.child_scheduled[child] {
            return;
        }
        let gate = page.gates.get(child);
        // (An unreliable gate may never complete: it holds nothing back.)
        for g in gate.map_or(&[][..], |g| &g.gates[..]).iter().filter(|g| !page.is_unreliable(g.index())) {
            match app.processed_ns[g.index()] {
                Some(t) => ready = ready.max(t),
                // Given up incomplete: nothing to wait for.
                None if app.done[g.index()] => ready = ready.max(self.now_ns),
                None => return,
            }
        }
        app.child_scheduled[child] = true;
        let delay = page.discovery.child_delay_ns(page.page.get(parent), gate.map_or(0, |g| g.processing_ns));
        let stall = page.browser.stall_ns.get(child).copied().unwrap_or(0);
        self.events.push(ready.saturating_add(delay).saturating_add(stall), Ev::PageRequest(f, child as u32));
    }

    /// Streaming discovery: `bytes` of object `k` have arrived on connection `c` (a watermark
    /// the client set, [`BrowserModel::stream_offsets_bytes`]): the children found within
    /// them are requested ([`Simulator::request_child`]), and the watermark moves to the next
    /// child's offset.
    fn page_stream(&mut self, f: u32, c: u32, k: u32, bytes: u64) {
        let app = &mut self.flows[f as usize].apps[0];
        let Some(page) = app.page.clone() else { return };
        let ku = k as usize;
        if ku >= page.page.len() || page.browser.stream_offsets_bytes.is_empty() || app.done[ku] {
            return;
        }
        for &child in page.page.children(triage_web::ObjectId(k)) {
            let i = child.index();
            let app = &mut self.flows[f as usize].apps[0];
            if app.found_ns[i].is_some()
                || page.browser.stream_offset_bytes(&page.page, i).is_none_or(|off| off > bytes)
            {
                continue;
            }
            app.found_ns[i] = Some(self.now_ns);
            self.request_child(f, &page, i);
        }
        let app = &self.flows[f as usize].apps[0];
        if let Some(next) = page.browser.next_stream_offset_bytes(&page.page, ku, &app.found_ns) {
            self.conns[c as usize].conn.watch_message_bytes(k, next);
        }
    }

    /// A web server writes its response to request `k` on connection `c`.
    fn server_respond(&mut self, f: u32, c: u32, k: usize) {
        let Some(page) = self.flows[f as usize].apps[1].page.clone() else { return };
        let app = &mut self.flows[f as usize].apps[1];
        let rec = app.record_base + k;
        app.written += 1;
        let m = &app.messages[k];
        let (bytes, prio, unrel) = (m.bytes, m.priority, m.unreliable);
        self.recorder.messages[rec].written_ns = Some(self.now_ns);
        // QUIC mode: the response's stream carries the RFC 9218 urgency Chrome would send
        // for the request's recorded priority (the CATS level when none is).
        let urgency = page.page.objects()[k].browser_priority.map(|b| b.rfc9218_urgency());
        // TCP mode with strict priority: an HTTP/2 server orders responses by the urgency
        // the browser sent with each request (the CATS level when none is recorded).
        let strict = matches!(self.flows[f as usize].spec.server_transport.scheduler, SchedulerKind::Priority)
            && matches!(self.conns[c as usize].conn, Endpoint::Tcp(_));
        let prio = if strict { urgency.or(prio) } else { prio };
        write_to(&mut self.conns[c as usize].conn, self.now_ns, k as u32, bytes, prio, unrel, urgency, None);
    }

    /// A page-loading client wants object `k`: it writes the request, or, with a connection
    /// pool, hands it to the connection of the object's group (opened on first use).
    fn page_request(&mut self, f: u32, k: u32) {
        let app = &mut self.flows[f as usize].apps[0];
        if let Some(d) = app.discovered_ns.get_mut(k as usize) {
            d.get_or_insert(self.now_ns);
        }
        if app.page.as_ref().is_some_and(|p| p.page.objects().get(k as usize).is_some_and(|o| o.from_cache)) {
            self.cache_hit(f, k);
            return;
        }
        if let Some(pool) = app.pool.as_mut() {
            let Some(page) = app.page.clone() else { return };
            let Some(&g) = page.browser.group_of.get(k as usize) else { return };
            if page.browser.layout_blocking(&page.page, k as usize) {
                pool.layout_blocking_in_flight += 1;
            }
            if page.browser.delayable(&page.page, k as usize) {
                // Behind the delayable requests already held back, if any.
                pool.throttled.push_back(k);
                self.release_throttled(f);
            } else {
                self.pool_enqueue(f, k, g as usize);
            }
            return;
        }
        let Some(c) = self.flows[f as usize].client_conn else { return };
        self.write_request(f, k, c);
    }

    /// A recorded cache hit: the browser has the object at once, with no request on the
    /// network (its request and response records are done at this instant).
    fn cache_hit(&mut self, f: u32, k: u32) {
        let flow = &mut self.flows[f as usize];
        let req = flow.apps[0].record_base + k as usize;
        let resp = flow.apps[1].record_base + k as usize;
        flow.apps[0].written += 1;
        flow.apps[1].written += 1;
        for idx in [req, resp] {
            let rec = &mut self.recorder.messages[idx];
            rec.written_ns = Some(self.now_ns);
            rec.first_byte_ns = Some(self.now_ns);
        }
        // The request is "complete" too: nothing was sent, nothing is outstanding.
        if self.recorder.messages[req].completed_ns.is_none() {
            self.recorder.messages[req].completed_ns = Some(self.now_ns);
            flow.remaining_messages -= 1;
        }
        let c = flow.client_conn.unwrap_or(0);
        self.message_complete(f, 0, c, k, None);
    }

    /// Chrome's throttling: delayable requests held back start, in order, while the limit
    /// allows.
    fn release_throttled(&mut self, f: u32) {
        loop {
            let app = &mut self.flows[f as usize].apps[0];
            let (Some(pool), Some(page)) = (app.pool.as_mut(), app.page.clone()) else { return };
            if pool.delayable_in_flight >= pool.delayable_limit() {
                return;
            }
            let Some(k) = pool.throttled.pop_front() else { return };
            pool.delayable_in_flight += 1;
            self.pool_enqueue(f, k, page.browser.group_of[k as usize] as usize);
        }
    }

    /// Hands request `k` to group `g`'s connection, opening it (after DNS) on first use.
    fn pool_enqueue(&mut self, f: u32, k: u32, g: usize) {
        let app = &mut self.flows[f as usize].apps[0];
        let (Some(pool), Some(page)) = (app.pool.as_mut(), app.page.clone()) else { return };
        pool.waiting[g].push_back(k);
        if pool.ready[g] {
            self.pool_flush(f, g);
        } else if !pool.opening[g] {
            pool.opening[g] = true;
            // DNS: a host's first connection waits for the lookup; later ones for the same
            // lookup's end.
            let host = &page.browser.groups[g].host;
            let at = match pool.dns_done_ns.get(host) {
                Some(&t) => t.max(self.now_ns),
                None => {
                    let t = self.now_ns.saturating_add(self.dns_ns(f, &page, host));
                    self.flows[f as usize].apps[0].pool.as_mut().expect("pool").dns_done_ns.insert(host.clone(), t);
                    t
                }
            };
            // With `connect = "recorded"`: what its recorded connection took beyond round trips.
            let at = at.saturating_add(page.browser.connect_extra_ns.get(g).copied().unwrap_or(0));
            self.events.push(at, Ev::PoolOpen(f, g as u32));
        }
    }

    /// Round trips of opening a connection on the idle path: TCP's, and TLS 1.3's when it
    /// runs (TCP mode, https); QUIC's one.
    fn handshakes(&self, f: u32, page: &PageLoad, https: bool) -> u64 {
        let tcp = self.flows[f as usize].spec.client_transport.mode == triage_core::TransportMode::Tcp;
        if https && page.browser.tls && tcp {
            2
        } else {
            1
        }
    }

    /// What the navigation's redirect hops cost a pooled page load before its root request
    /// (ns). Nothing else is on the wire while they run, so each is its round trips on the
    /// idle path, not packets: the host's DNS lookup unless the host was looked up before or
    /// is the root's (whose lookup the root's connection pays), a TCP handshake and, on https
    /// with TLS, a TLS 1.3 handshake (one round trip each; QUIC's one in all), plus with
    /// `connect = "recorded"` what the hop's recorded connection took beyond its round trips,
    /// unless its origin was connected before or is the root's (the root's connection pays
    /// those), then one round trip for the request and its 3xx response, plus, with server
    /// time, the hop's recorded wait less one recorded round trip ([`triage_web::netinfer::rtt_from_connect_ns`]), and for a
    /// client-side redirect its recorded client delay (download, parsing, script or timer).
    fn navigation_redirects_ns(&self, f: u32) -> u64 {
        let Some(page) = self.flows[f as usize].apps[0].page.clone() else { return 0 };
        let hops = page.page.navigation_redirects();
        if hops.is_empty() {
            return 0;
        }
        let rtt = self.flow_base_rtt_ns(f);
        let root_url = &page.page.objects()[page.page.root().index()].url;
        let root_host = triage_web::urlparts::host(root_url);
        let root_origin = triage_web::urlparts::origin(root_url);
        let mut hosts = std::collections::BTreeSet::new();
        let mut origins = std::collections::BTreeSet::new();
        let mut total = 0u64;
        for hop in hops {
            let host = triage_web::urlparts::host(&hop.url);
            let origin = triage_web::urlparts::origin(&hop.url);
            let https = triage_web::urlparts::scheme(&hop.url) == "https";
            if host != root_host && hosts.insert(host.clone()) {
                total = total.saturating_add(self.dns_ns(f, &page, &host));
            }
            if origin != root_origin && origins.insert(origin) {
                total = total.saturating_add(rtt.saturating_mul(self.handshakes(f, &page, https)));
                if !page.browser.connect_extra_ns.is_empty() {
                    let extra =
                        triage_web::netinfer::connect_extra_ns(hop.recorded_connect_ns, hop.recorded_tls_ns, &hop.url);
                    total = total.saturating_add(extra);
                }
            }
            total = total.saturating_add(rtt);
            if !page.browser.server_ns.is_empty() {
                let recorded_rtt =
                    triage_web::netinfer::rtt_from_connect_ns(hop.recorded_connect_ns, hop.recorded_tls_ns, &hop.url);
                total = total.saturating_add(hop.server_wait_ns.saturating_sub(recorded_rtt));
            }
            // A client-side redirect: its document's download, parsing and timer, as recorded.
            total = total.saturating_add(hop.client_delay_ns);
        }
        total
    }

    /// DNS lookup time of a pooled page load: the recording's for the host (`dns =
    /// "recorded"`), as configured, or twice the path's base round-trip time (Lantern's
    /// `DNSCache`).
    fn dns_ns(&self, f: u32, page: &PageLoad, host: &str) -> u64 {
        if let Some(t) = page.browser.recorded_dns_ns.as_ref().and_then(|m| m.get(host)) {
            return *t;
        }
        page.browser.dns_ns.unwrap_or_else(|| self.flow_base_rtt_ns(f).saturating_mul(2))
    }

    /// Sum of the propagation delays of the links from node `a` to node `b`.
    fn path_delay_ns(&self, a: u32, b: u32) -> u64 {
        let (mut node, mut total, mut hops) = (a, 0u64, 0usize);
        while node != b && hops <= self.net.links.len() {
            let Some(l) = self.net.route(node, b) else { break };
            let link = &self.net.links[l as usize];
            total = total.saturating_add(link.delay_ns());
            node = link.to;
            hops += 1;
        }
        total
    }

    /// A pooled page load opens the connection of group `g` (its DNS lookup is done).
    fn pool_open(&mut self, f: u32, g: u32) {
        let (cfg, seed) = self.shared_config(f, false);
        let flow = &self.flows[f as usize];
        let (client_port, server_port) = flow_ports(f);
        let port = if g == 0 { client_port } else { POOL_PORT_BASE + g as u16 };
        let local = Addr { node: flow.spec.client, port };
        let remote = Addr { node: flow.spec.server, port: server_port };
        let conn = Endpoint::connect_seeded(cfg, seed, local, remote);
        let id = self.add_conn(conn, f, false);
        self.conns[id as usize].group = g;
        let flow = &mut self.flows[f as usize];
        flow.apps[0].pool.as_mut().expect("pool").conn[g as usize] = Some(id);
        if flow.client_conn.is_none() {
            flow.client_conn = Some(id);
        }
        self.service(id);
    }

    /// A pooled page load's connection `c` is up: TLS starts over it (TCP mode, https), or
    /// its requests go out.
    fn pool_connected(&mut self, f: u32, c: u32) {
        let g = self.conns[c as usize].group as usize;
        let app = &mut self.flows[f as usize].apps[0];
        app.connected_ns.get_or_insert(self.now_ns);
        let Some(page) = app.page.clone() else { return };
        let tcp = matches!(self.conns[c as usize].conn, Endpoint::Tcp(_));
        if page.browser.tls && page.browser.groups[g].https && tcp {
            let bytes = page.browser.tls_client_hello_bytes.max(1);
            self.conns[c as usize].conn.write(self.now_ns, TLS_CLIENT_HELLO, bytes, Some(0));
            self.service(c);
        } else {
            app.pool.as_mut().expect("pool").ready[g] = true;
            self.pool_flush(f, g);
        }
    }

    /// A TLS handshake message arrived: the server answers the ClientHello with its flight;
    /// the client, holding the server's flight, may send requests.
    fn tls_message(&mut self, f: u32, side: usize, c: u32, msg_id: u32) {
        let Some(page) = self.flows[f as usize].apps[side].page.clone() else { return };
        if side == 1 && msg_id == TLS_CLIENT_HELLO {
            let bytes = page.browser.tls_server_flight_bytes.max(1);
            self.conns[c as usize].conn.write(self.now_ns, TLS_SERVER_FLIGHT, bytes, Some(0));
        } else if side == 0 && msg_id == TLS_SERVER_FLIGHT {
            let g = self.conns[c as usize].group as usize;
            if let Some(pool) = self.flows[f as usize].apps[0].pool.as_mut() {
                pool.ready[g] = true;
            }
            self.pool_flush(f, g);
        }
    }

    /// Writes the requests waiting for group `g`'s connection (HTTP/1.1: the first only,
    /// once no response is in flight).
    fn pool_flush(&mut self, f: u32, g: usize) {
        let app = &mut self.flows[f as usize].apps[0];
        let (Some(pool), Some(page)) = (app.pool.as_mut(), app.page.as_ref()) else { return };
        let Some(c) = pool.conn[g].filter(|_| pool.ready[g]) else { return };
        let http1 = page.browser.groups[g].http1;
        let mut ks = Vec::new();
        while pool.busy[g].is_none() {
            let Some(k) = pool.waiting[g].pop_front() else { break };
            ks.push(k);
            if http1 {
                pool.busy[g] = Some(k);
            }
        }
        if ks.is_empty() {
            return;
        }
        for k in ks {
            self.write_request(f, k, c);
        }
        self.service(c);
    }

    /// A page-loading client writes the request for object `k` on connection `c`.
    fn write_request(&mut self, f: u32, k: u32, c: u32) {
        let app = &mut self.flows[f as usize].apps[0];
        let Some(m) = app.messages.get(k as usize) else { return };
        let (bytes, prio) = (m.bytes, m.priority);
        let rec = app.record_base + k as usize;
        app.written += 1;
        self.recorder.messages[rec].written_ns = Some(self.now_ns);
        self.conns[c as usize].conn.write(self.now_ns, k, bytes, prio);
        if let Some(page) = app.page.as_ref() {
            // Streaming discovery: hear when the response reaches its first child's place.
            if let Some(w) = page.browser.next_stream_offset_bytes(&page.page, k as usize, &app.found_ns) {
                self.conns[c as usize].conn.watch_message_bytes(k, w);
            }
            let kind = page.page.objects()[k as usize].kind;
            if let Some(d) = page.partial.deadline_ns(kind).filter(|_| page.is_unreliable(k as usize)) {
                self.events.push(self.now_ns.saturating_add(d), Ev::PartialCheck(f, k));
            }
        }
    }

    fn app_write_due(&mut self, f: u32, side: usize) {
        let flow = &self.flows[f as usize];
        let conn = if side == 1 { flow.server_conn } else { flow.client_conn };
        let Some(c) = conn else { return };
        if flow.apps[side].connected_ns.is_none() {
            return;
        }
        self.write_due(f, side, c);
        let flow = &self.flows[f as usize];
        let app = &flow.apps[side];
        if let Some(m) = app.messages.get(app.written) {
            let t = flow.spec.start_ns.saturating_add(m.at_ns.unwrap_or(0));
            self.events.push(t.max(self.now_ns), Ev::AppWrite(f, side as u32));
        }
        self.service(c);
    }

    /// Writes every message of this end that is due, in order.
    fn write_due(&mut self, f: u32, side: usize, c: u32) {
        let start = self.flows[f as usize].spec.start_ns;
        loop {
            let app = &mut self.flows[f as usize].apps[side];
            let Some(m) = app.messages.get(app.written) else { break };
            if m.at_ns.is_some_and(|at| start.saturating_add(at) > self.now_ns) {
                break;
            }
            let (id, len, prio, unrel) = (app.written as u32, m.bytes, m.priority, m.unreliable);
            let after = m.same_stream_as.map(|i| i as u32);
            let rec = app.record_base + app.written;
            app.written += 1;
            self.recorder.messages[rec].written_ns = Some(self.now_ns);
            write_to(&mut self.conns[c as usize].conn, self.now_ns, id, len, prio, unrel, None, after);
        }
        self.maybe_close(f, side, c);
    }

    /// An end closes once it has written everything, and, when it writes nothing, once the
    /// peer has closed.
    fn maybe_close(&mut self, f: u32, side: usize, c: u32) {
        let app = &mut self.flows[f as usize].apps[side];
        if app.closed {
            return;
        }
        let all_written = app.written == app.messages.len();
        if all_written && (!app.messages.is_empty() || app.peer_closed) {
            app.closed = true;
            match app.pool.as_ref() {
                // The page is loaded: the browser closes every connection of its pool.
                Some(pool) => {
                    for c in pool.conn.clone().into_iter().flatten() {
                        self.conns[c as usize].conn.close();
                        self.service(c);
                    }
                }
                None => self.conns[c as usize].conn.close(),
            }
        }
    }

    fn sample(&mut self) {
        for (series, slot) in self.recorder.conn_series.iter_mut().zip(&self.conns) {
            let c = &slot.conn;
            series.samples.push(ConnSample {
                t_ns: self.now_ns,
                cwnd_bytes: c.cwnd_bytes(),
                inflight_bytes: c.bytes_in_flight(),
                srtt_ns: c.srtt_ns().unwrap_or(0),
                rtt_ns: c.latest_rtt_ns().unwrap_or(0),
                pacing_rate_bps: c.pacing_rate_bps().unwrap_or(0),
                delivered_bytes: c.delivered_bytes(),
                cc_state: c.cc_state().1,
            });
        }
        for (i, l) in self.net.links.iter().enumerate() {
            self.recorder.queue_series[i].push(QueueSample {
                t_ns: self.now_ns,
                len_packets: l.queue().len_packets(),
                len_bytes: l.queue().len_bytes(),
                dequeued_packets: l.queue().stats().dequeued_packets,
                sojourn_total_ns: l.queue().stats().sojourn_total_ns,
            });
        }
    }

    /// Per-flow results.
    pub fn flow_results(&self) -> Vec<FlowResult> {
        // Every connection of each flow (several for a pooled page load), in one pass.
        let mut per_flow: Vec<([triage_core::ConnectionStats; 2], u32)> = vec![Default::default(); self.flows.len()];
        for slot in &self.conns {
            let (stats, connections) = &mut per_flow[slot.flow as usize];
            stats[slot.is_server as usize].accumulate(slot.conn.stats());
            *connections += u32::from(!slot.is_server);
        }
        self.flows
            .iter()
            .zip(per_flow)
            .map(|(f, (stats, connections))| {
                let bytes =
                    f.apps.iter().flat_map(|a| a.messages.iter()).fold(0u64, |sum, m| sum.saturating_add(m.bytes));
                FlowResult {
                    name: f.spec.name.clone(),
                    completed_ns: f.completed_ns,
                    start_ns: f.spec.start_ns,
                    bytes,
                    retransmitted_segments: stats.iter().map(|s| s.retransmitted_segments).sum(),
                    rto_count: stats.iter().map(|s| s.rto_count).sum(),
                    fast_recoveries: stats.iter().map(|s| s.fast_recoveries).sum(),
                    conn_stats: stats,
                    connections,
                }
            })
            .collect()
    }

    /// For a page-load flow: per object, in page order, when the client wrote its request,
    /// when the server wrote its response and when the client held all of the response
    /// (`None` where that never happened), and when the client's connection was
    /// established. The waterfall of `--out` and `--html` draws these.
    pub fn page_object_times(&self, flow: u32) -> Option<PageTimes> {
        let f = self.flows.get(flow as usize)?;
        let page = f.apps[0].page.clone()?;
        let objects = (0..page.page.len())
            .map(|k| {
                let req = &self.recorder.messages[f.apps[0].record_base + k];
                let resp = &self.recorder.messages[f.apps[1].record_base + k];
                ObjectTimes {
                    discovered_ns: f.apps[0].discovered_ns.get(k).copied().flatten(),
                    request_ns: req.written_ns,
                    response_ns: resp.written_ns,
                    first_byte_ns: resp.first_byte_ns,
                    complete_ns: resp.completed_ns,
                }
            })
            .collect();
        Some(PageTimes { start_ns: f.spec.start_ns, connected_ns: f.apps[0].connected_ns, objects })
    }

    /// For a page-load flow: the page and each object's request and completion time (objects
    /// never completed are left out).
    pub fn page_deliveries(&self, flow: u32) -> Option<(Arc<PageLoad>, triage_web::Deliveries)> {
        let f = self.flows.get(flow as usize)?;
        let page = f.apps[0].page.clone()?;
        let mut d = triage_web::Deliveries::new();
        for k in 0..page.page.len() {
            let req = &self.recorder.messages[f.apps[0].record_base + k];
            let resp = &self.recorder.messages[f.apps[1].record_base + k];
            if let (Some(r), Some(c)) = (req.written_ns, resp.completed_ns) {
                // With a CPU model an object counts once processed.
                let c = f.apps[0].processed_ns.get(k).copied().flatten().map_or(c, |p| p.max(c));
                d.insert(triage_web::ObjectId(k as u32), triage_web::Delivery { request_ns: r, complete_ns: c });
            }
        }
        Some((page, d))
    }

    /// For a page-load flow: when each object's last byte arrived (page order; `None` if it
    /// did not), before any CPU processing.
    pub fn page_arrivals(&self, flow: u32) -> Option<Vec<Option<u64>>> {
        let f = self.flows.get(flow as usize)?;
        let page = f.apps[0].page.as_ref()?;
        Some((0..page.page.len()).map(|k| self.recorder.messages[f.apps[1].record_base + k].completed_ns).collect())
    }

    /// For a page-load flow with a CPU model: the main-thread tasks it ran (start in ns, the
    /// task), in order; `None` without a CPU model.
    pub fn page_main_tasks(&self, flow: u32) -> Option<&[(u64, crate::app::MainTask)]> {
        let f = self.flows.get(flow as usize)?;
        let page = f.apps[0].page.as_ref()?;
        (!page.browser.cpu_tasks.is_empty()).then_some(&f.apps[0].main_tasks[..])
    }

    /// The base round-trip time (ns) of a flow's path: its propagation delays both ways.
    pub fn flow_base_rtt_ns(&self, flow: u32) -> u64 {
        let spec = &self.flows[flow as usize].spec;
        self.path_delay_ns(spec.client, spec.server).saturating_add(self.path_delay_ns(spec.server, spec.client))
    }

    /// For a page-load flow: what arrived of each object the client is done with
    /// ([`triage_web::PartialDelivery`]; reliable objects are complete deliveries). An
    /// unreliable object reports the chunks the client got before it was done with the object
    /// (none: all of it lost; chunks that came after the client gave it up count as lost); its
    /// `last_chunk_ns` is when its last chunk came in, or when the client gave up on it if
    /// none did.
    pub fn page_partials(&self, flow: u32) -> Option<triage_web::PartialDeliveries> {
        let f = self.flows.get(flow as usize)?;
        let page = f.apps[0].page.clone()?;
        let client = f.client_conn.and_then(|c| self.conns[c as usize].conn.quic());
        let server = f.server_conn.and_then(|c| self.conns[c as usize].conn.quic());
        let fates = server.map(|s| s.datagram_fates()).unwrap_or_default();
        let mut out = triage_web::PartialDeliveries::new();
        for k in 0..page.page.len() {
            let req = &self.recorder.messages[f.apps[0].record_base + k];
            let resp = &self.recorder.messages[f.apps[1].record_base + k];
            let (Some(request_ns), Some(done_ns)) = (req.written_ns, resp.completed_ns) else { continue };
            let expected_bytes = resp.bytes;
            let id = triage_web::ObjectId(k as u32);
            let d = match (page.is_unreliable(k), client) {
                (true, Some(q)) => {
                    // What lost the missing bytes: chunks the sender never sent (full queue),
                    // chunks that came without their metadata datagram, chunks that came after
                    // the client gave up; the network the rest.
                    let local = server.and_then(|s| s.datagram_local_drops(k as u32)).map_or(0, |x| x.1);
                    let last = q.datagram_object(k as u32);
                    let orphaned = last.map_or(0, |o| o.bytes_orphaned);
                    let at_end = last.map_or(0, |o| o.bytes_received);
                    let causes = |received: u64| {
                        let lost = expected_bytes.saturating_sub(received.min(expected_bytes));
                        triage_web::LossCauses::split(lost, orphaned, at_end.saturating_sub(received), local)
                    };
                    match f.apps[0].given_up.get(&(k as u32)).copied().unwrap_or(last) {
                        Some(o) => triage_web::PartialDelivery {
                            request_ns,
                            // No chunk used (all lost, or discarded for want of the metadata
                            // datagram): the object ended when the client gave it up.
                            last_chunk_ns: if o.chunks_received == 0 { done_ns } else { o.last_chunk_ns },
                            expected_bytes,
                            received_bytes: o.bytes_received,
                            chunks_lost: u64::from(o.chunks_missing() + o.chunks_orphaned),
                            complete: o.complete,
                            unreliable: true,
                            causes: causes(o.bytes_received),
                        },
                        None => triage_web::PartialDelivery {
                            request_ns,
                            last_chunk_ns: done_ns,
                            expected_bytes,
                            received_bytes: 0,
                            chunks_lost: fates.iter().find(|x| x.0 == k as u32).map_or(0, |x| x.1 as u64),
                            complete: false,
                            unreliable: true,
                            causes: causes(0),
                        },
                    }
                }
                _ => triage_web::PartialDelivery::complete(
                    triage_web::Delivery { request_ns, complete_ns: done_ns },
                    expected_bytes,
                ),
            };
            out.insert(id, d);
        }
        Some(out)
    }

    /// The TCP-mode connection at one end of a flow, once it exists.
    pub fn connection(&self, flow: u32, server: bool) -> Option<&Connection> {
        self.endpoint(flow, server)?.tcp()
    }

    /// The connection (either mode) at one end of a flow, once it exists.
    pub fn endpoint(&self, flow: u32, server: bool) -> Option<&Endpoint> {
        let f = self.flows.get(flow as usize)?;
        let c = if server { f.server_conn } else { f.client_conn }?;
        Some(&self.conns[c as usize].conn)
    }
}

/// Times of one object of a page load ([`Simulator::page_object_times`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectTimes {
    /// The client wanted the object (a pooled page load writes the request once the
    /// object's connection is up).
    pub discovered_ns: Option<u64>,
    /// The client wrote the request.
    pub request_ns: Option<u64>,
    /// The server wrote the response (the request had arrived and been processed).
    pub response_ns: Option<u64>,
    /// The client got the response's first bytes.
    pub first_byte_ns: Option<u64>,
    /// The client held all of the response.
    pub complete_ns: Option<u64>,
}

/// Times of a page load ([`Simulator::page_object_times`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageTimes {
    /// The flow's start (the client opens its connection).
    pub start_ns: u64,
    /// The client's connection was established (handshake done).
    pub connected_ns: Option<u64>,
    /// Per object, in page order (object id = index).
    pub objects: Vec<ObjectTimes>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{add_simplex, LinkParams};
    use proptest::prelude::*;

    /// The routes as the BFS from every node gives them (the table every node had before
    /// hosts with one link shared their router's).
    fn bfs_routes(net: &Network) -> Vec<Vec<Option<u32>>> {
        let n = net.nodes.len();
        (0..n)
            .map(|src| {
                let mut first = vec![None; n];
                let mut seen = vec![false; n];
                seen[src] = true;
                let mut q = VecDeque::new();
                for (li, l) in net.links.iter().enumerate().filter(|(_, l)| l.from as usize == src) {
                    let to = l.to as usize;
                    if !seen[to] {
                        seen[to] = true;
                        first[to] = Some(li as u32);
                        q.push_back(to);
                    }
                }
                while let Some(u) = q.pop_front() {
                    if net.nodes[u].kind == NodeKind::Host {
                        continue;
                    }
                    for l in net.links.iter().filter(|l| l.from as usize == u) {
                        let to = l.to as usize;
                        if !seen[to] {
                            seen[to] = true;
                            first[to] = first[u];
                            q.push_back(to);
                        }
                    }
                }
                first
            })
            .collect()
    }

    fn network(hosts: usize, routers: usize, links: &[(usize, usize)]) -> Network {
        let mut net = Network::default();
        for i in 0..hosts {
            net.add_node(&format!("h{i}"), NodeKind::Host);
        }
        for i in 0..routers {
            net.add_node(&format!("r{i}"), NodeKind::Router);
        }
        let n = hosts + routers;
        let p = LinkParams::new(1_000_000, 1_000, 10);
        for &(a, b) in links {
            add_simplex(&mut net, 1, (a % n) as u32, (b % n) as u32, &p);
        }
        net
    }

    fn check(mut net: Network) {
        net.compute_routes();
        let want = bfs_routes(&net);
        let n = net.nodes.len() as u32;
        for src in 0..n + 1 {
            for dst in 0..n + 1 {
                let w = want.get(src as usize).and_then(|r| r.get(dst as usize).copied().flatten());
                assert_eq!(net.route(src, dst), w, "{src} -> {dst}");
            }
        }
    }

    /// A flow from `ends.0` to `ends.1` starting at 0 with the client's and the server's
    /// settings, the client writing `client_app` to a sink.
    fn test_flow(
        name: &str,
        ends: (u32, u32),
        [client, server]: [ConnectionConfig; 2],
        client_app: AppSpec,
    ) -> FlowSpec {
        FlowSpec {
            name: name.into(),
            client: ends.0,
            server: ends.1,
            start_ns: 0,
            client_transport: client,
            server_transport: server,
            client_app,
            server_app: AppSpec::Sink,
            extra_paths: Vec::new(),
        }
    }

    /// A client that writes one reliable message of `bytes` at once.
    fn one_message(bytes: u64) -> AppSpec {
        AppSpec::Messages(vec![MessageSpec {
            name: "m".into(),
            bytes,
            priority: None,
            at_ns: None,
            unreliable: false,
            same_stream_as: None,
        }])
    }

    /// Connections opened with equal settings share one copy of them (flows 0 and 1, and
    /// each flow's two ends here), also when their seeds differ, as a scenario's flows'
    /// do; different settings get their own (flow 2).
    #[test]
    fn connections_with_equal_settings_share_one_copy() {
        let p = LinkParams::new(10_000_000, 1_000_000, 100);
        let (net, clients, servers) = crate::topology::dumbbell(1, 3, &p, &p);
        let mut sim = Simulator::new(net, 0);
        let cubic = ConnectionConfig { controller: triage_core::cc::ControllerKind::Cubic, ..Default::default() };
        let seeded = |seed| ConnectionConfig { seed, ..Default::default() };
        for (i, cfg) in [seeded(11), seeded(12), cubic].into_iter().enumerate() {
            sim.add_flow(test_flow(
                &format!("f{i}"),
                (clients[i], servers[i]),
                [cfg.clone(), cfg],
                one_message(10_000),
            ));
        }
        sim.run(1_000_000_000, |_| {});
        let cfg = |f: u32, server: bool| sim.connection(f, server).expect("opened").config() as *const ConnectionConfig;
        assert!(std::ptr::eq(cfg(0, false), cfg(1, false)));
        assert!(std::ptr::eq(cfg(0, false), cfg(1, true)));
        assert!(std::ptr::eq(cfg(2, false), cfg(2, true)));
        assert!(!std::ptr::eq(cfg(0, false), cfg(2, false)));
        assert_eq!(sim.shared_configs.len(), 2);
        assert!(sim.shared_configs.iter().all(|c| c.seed == 0), "the shared copy carries no flow's seed");
        assert_eq!((sim.shared_config(0, false).1, sim.shared_config(1, true).1), (11, 12), "each its own");
    }

    /// The shared copy is chosen when a flow is added; settings changed after that (as
    /// `set_qlog` changes every flow's) are what its connections open with, still shared.
    #[test]
    fn settings_changed_after_adding_reach_the_connections() {
        let p = LinkParams::new(10_000_000, 1_000_000, 100);
        let (net, clients, servers) = crate::topology::dumbbell(1, 2, &p, &p);
        let mut sim = Simulator::new(net, 0);
        for i in 0..2 {
            let client = ConnectionConfig { seed: 5 + i as u64, ..Default::default() };
            let ends = (clients[i], servers[i]);
            sim.add_flow(test_flow(&format!("f{i}"), ends, [client, ConnectionConfig::default()], one_message(10_000)));
        }
        let before = sim.shared_config(0, false).0;
        assert!(!before.quic.qlog);
        sim.set_qlog(true);
        sim.run(1_000_000_000, |_| {});
        let cfg = |f: u32, server: bool| sim.connection(f, server).expect("opened").config();
        for (f, server) in [(0, false), (0, true), (1, false), (1, true)] {
            assert!(
                cfg(f, server).quic.qlog,
                "flow {f}'s {} end opened with the changed settings",
                ["client", "server"][server as usize]
            );
        }
        assert!(std::ptr::eq(cfg(0, false), cfg(1, false)), "still one copy for both clients");
        assert!(
            std::ptr::eq(cfg(0, false), cfg(0, true)),
            "and the servers' settings equal the clients' but for the seed"
        );
        assert_eq!(sim.shared_configs.len(), 1);
    }

    /// QUIC-mode settings are not kept for sharing: a QUIC connection takes a copy of its
    /// own, so the one handed to it is unshared and moves in.
    #[test]
    fn quic_settings_are_handed_over_unshared() {
        let p = LinkParams::new(10_000_000, 1_000_000, 100);
        let (net, clients, servers) = crate::topology::dumbbell(1, 1, &p, &p);
        let mut sim = Simulator::new(net, 0);
        let quic = ConnectionConfig { mode: triage_core::TransportMode::Quic, ..Default::default() };
        sim.add_flow(test_flow("q", (clients[0], servers[0]), [quic.clone(), quic], AppSpec::Sink));
        let (cfg, _) = sim.shared_config(0, false);
        assert_eq!(Arc::strong_count(&cfg), 1);
        assert!(sim.shared_configs.is_empty());
    }

    /// A bulk TCP transfer restarts its retransmission timer at every ACK, so the timer
    /// event armed for the first deadline finds it moved: such events are re-armed without
    /// running the connection (the debug assertion there checks, in every test run, that
    /// the deadline the slot keeps is the connection's own), and the transfer completes
    /// with no timeout fired.
    #[test]
    fn early_timers_are_rearmed_without_the_connection() {
        let p = LinkParams::new(10_000_000, 5_000_000, 100);
        let (net, clients, servers) = crate::topology::dumbbell(1, 1, &p, &p);
        let mut sim = Simulator::new(net, 0);
        let defaults = [ConnectionConfig::default(), ConnectionConfig::default()];
        sim.add_flow(test_flow("bulk", (clients[0], servers[0]), defaults, one_message(2_000_000)));
        sim.run(20_000_000_000, |_| {});
        let results = sim.flow_results();
        assert!(results[0].completed_ns.is_some(), "{:?}", results[0].completed_ns);
        assert_eq!(results[0].rto_count, 0);
        assert!(sim.stats().early_timers > 0, "{:?}", sim.stats());
    }

    /// The per-node cache of the last connection found answers as the map does, also
    /// after a pair it holds is inserted again with another connection.
    #[test]
    fn demultiplexing_cache_follows_the_map() {
        let (net, _, _) = crate::topology::dumbbell(1, 2, &LinkParams::new(1, 1, 1), &LinkParams::new(1, 1, 1));
        let mut sim = Simulator::new(net, 0);
        let (a, b, c) = (Addr { node: 0, port: 1 }, Addr { node: 5, port: 2 }, Addr { node: 5, port: 3 });
        assert_eq!(sim.find_conn(a, b), None);
        sim.demux_insert(a, b, 7);
        sim.demux_insert(a, c, 8);
        assert_eq!(sim.find_conn(a, b), Some(7));
        assert_eq!(sim.find_conn(a, b), Some(7), "from the cache");
        assert_eq!(sim.find_conn(a, c), Some(8), "another pair at the same node");
        assert_eq!(sim.find_conn(a, b), Some(7));
        sim.demux_insert(a, b, 9);
        assert_eq!(sim.find_conn(a, b), Some(9), "the cached pair inserted again");
        // A node beyond the network is looked up in the map alone.
        let far = Addr { node: 99, port: 1 };
        sim.demux_insert(far, b, 4);
        assert_eq!(sim.find_conn(far, b), Some(4));
    }

    #[test]
    fn a_dumbbell_shares_the_routers_tables() {
        let (mut net, _, _) = crate::topology::dumbbell(1, 3, &LinkParams::new(1, 1, 1), &LinkParams::new(1, 1, 1));
        net.compute_routes();
        let uniform = net.routes.iter().filter(|r| matches!(r, Routes::Uniform(_))).count();
        assert_eq!(uniform, 6, "every host has one link to a router");
        check(net);
    }

    #[test]
    fn partial_reach_and_host_to_host_links_keep_full_tables() {
        // h0 -> r0 -> h1 only (r0 reaches no h2); h2 <-> h3 directly; h4 has two links.
        check(network(5, 1, &[(0, 5), (5, 1), (2, 3), (3, 2), (4, 5), (4, 2), (5, 4)]));
    }

    proptest! {
        #[test]
        fn routes_equal_a_bfs_from_every_node(
            hosts in 1usize..8,
            routers in 0usize..4,
            links in proptest::collection::vec((0usize..12, 0usize..12), 0..30),
        ) {
            check(network(hosts, routers, &links));
        }
    }
}
