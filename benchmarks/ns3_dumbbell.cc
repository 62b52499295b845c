// The scaling benchmark's ns-3 side (README "Performance"): N long NewReno bulk flows over a
// dumbbell, s_i -> R1 -> bottleneck -> R2 -> c_i, every link a point-to-point device with a
// DropTail queue of its own and no queue disc (as triage models a link), so that the same
// parameters mean the same network as the triage scenario benchmarks/scaling.sh writes.
// Built on docs/ns3/highrate_dumbbell.cc; addresses leave room for up to 62,500 flows, and
// the program counts packet-hops (packets serialized onto any link, PhyTxEnd on every
// device) the way triage counts them, and prints nothing per packet or per state change;
// with --perFlow=1 it also prints each flow's received bytes at the end ("flow_rx_bytes I N",
// what its PacketSink read), for benchmarks/scaling.sh --shares; with --order=1, one line
// per packet the bottleneck starts to send ("bott T FLOW SEQ LEN": seconds, the flow index
// from its source address, TCP sequence number relative to the flow's first byte, payload
// bytes), for benchmarks/scaling.sh --order.
// Build: g++ -O2 -std=c++17 ns3_dumbbell.cc -o ns3_dumbbell -I/usr/include $(ls
// /usr/lib/x86_64-linux-gnu/libns3-*.so | sed 's|.*/lib\(ns3-[^/]*\)\.so$|-l\1|')
// (as ../shared/reference/ns3/build.sh does; benchmarks/scaling.sh does it in /tmp).
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <cstdio>
#include <string>
#include <vector>
using namespace ns3;

static uint64_t gHops = 0;
static uint64_t gBottleneckBytes = 0;
static uint64_t gRxBytes = 0;

static void Hop(Ptr<const Packet>) { gHops++; }
static void BottleneckTx(Ptr<const Packet> p) { gBottleneckBytes += p->GetSize() - 2; } // minus PPP header
static std::vector<uint64_t> gFlowRxBytes;
static void Rx(Ptr<const Packet> p, const Address&) { gRxBytes += p->GetSize(); }
static void FlowRx(uint32_t flow, Ptr<const Packet> p, const Address&) { gFlowRxBytes[flow] += p->GetSize(); }
// The bottleneck's departures, in order: flow index (sender address 10.<1 + i / 250>.<i % 250>.1),
// sequence number and payload. ns-3 numbers a flow's SYN 0 and its first data byte 1, as triage.
static void BottleneckOrder(Ptr<const Packet> p0) {
  Ptr<Packet> p = p0->Copy();
  PppHeader ppp; p->RemoveHeader(ppp);
  Ipv4Header ip; p->RemoveHeader(ip);
  TcpHeader tcp; p->RemoveHeader(tcp);
  uint32_t a = ip.GetSource().Get();
  uint32_t flow = (((a >> 16) & 0xff) - 1) * 250 + ((a >> 8) & 0xff);
  std::printf("bott %.9f %u %u %u\n", Simulator::Now().GetSeconds(), flow, tcp.GetSequenceNumber().GetValue(), p->GetSize());
}

// 10.<hi>.<lo>.0/24 for flow i on side base (1: senders, 128: receivers).
static Ipv4Address Subnet(uint32_t base, uint32_t i) {
  return Ipv4Address(("10." + std::to_string(base + i / 250) + "." + std::to_string(i % 250) + ".0").c_str());
}

int main(int argc, char** argv) {
  std::string rate = "1Gbps", accessRate = "", delay = "1ms", accessDelay = "0ms";
  uint32_t queue = 1000, accessQueue = 1000, flows = 2, rcvBuf = 2 << 20;
  double stop = 5;
  bool perFlow = false;
  bool order = false;
  double startJitter = 0;
  uint32_t run = 1;
  std::string starts;
  CommandLine cmd;
  cmd.AddValue("rate", "bottleneck rate", rate);
  cmd.AddValue("delay", "bottleneck one-way delay", delay);
  cmd.AddValue("queue", "bottleneck DropTail queue, packets", queue);
  cmd.AddValue("accessRate", "access link rate (default: the bottleneck's)", accessRate);
  cmd.AddValue("accessDelay", "access link one-way delay", accessDelay);
  cmd.AddValue("accessQueue", "access DropTail queue, packets", accessQueue);
  cmd.AddValue("flows", "number of bulk flows (pairs)", flows);
  cmd.AddValue("rcvBuf", "send and receive buffer, bytes", rcvBuf);
  cmd.AddValue("stop", "simulated seconds", stop);
  cmd.AddValue("perFlow", "print each flow's received bytes at the end", perFlow);
  cmd.AddValue("order", "print every packet the bottleneck sends, in order", order);
  cmd.AddValue("startJitter", "each sender starts at a uniform random time in [0, this) seconds", startJitter);
  cmd.AddValue("run", "the random stream's run number (RngRun) for startJitter", run);
  cmd.AddValue("starts", "each sender's start in seconds, comma-separated (instead of startJitter)", starts);
  cmd.Parse(argc, argv);
  if (accessRate.empty()) accessRate = rate;
  RngSeedManager::SetRun(run);
  Ptr<UniformRandomVariable> startAt = CreateObject<UniformRandomVariable>();
  std::vector<double> startList;
  for (size_t at = 0; at < starts.size();) {
    size_t comma = starts.find(',', at);
    if (comma == std::string::npos) comma = starts.size();
    startList.push_back(std::stod(starts.substr(at, comma - at)));
    at = comma + 1;
  }
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(rcvBuf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));

  NodeContainer s, c, r; s.Create(flows); c.Create(flows); r.Create(2);
  InternetStackHelper st; st.Install(s); st.Install(c); st.Install(r);
  PointToPointHelper bot;
  bot.SetDeviceAttribute("DataRate", StringValue(rate)); bot.SetChannelAttribute("Delay", StringValue(delay));
  bot.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(queue) + "p")));
  PointToPointHelper acc;
  acc.SetDeviceAttribute("DataRate", StringValue(accessRate)); acc.SetChannelAttribute("Delay", StringValue(accessDelay));
  acc.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(accessQueue) + "p")));
  TrafficControlHelper tch;
  Ipv4AddressHelper a; std::vector<Ipv4Address> caddr;
  NetDeviceContainer bd = bot.Install(r.Get(0), r.Get(1));
  a.SetBase("10.0.0.0", "255.255.255.0"); a.Assign(bd); tch.Uninstall(bd);
  NetDeviceContainer all; all.Add(bd);
  for (uint32_t i = 0; i < flows; i++) {
    NetDeviceContainer d = acc.Install(s.Get(i), r.Get(0));
    a.SetBase(Subnet(1, i), "255.255.255.0"); a.Assign(d); tch.Uninstall(d);
    NetDeviceContainer e = acc.Install(r.Get(1), c.Get(i));
    a.SetBase(Subnet(128, i), "255.255.255.0");
    caddr.push_back(a.Assign(e).GetAddress(1)); tch.Uninstall(e);
    all.Add(d); all.Add(e);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  for (uint32_t k = 0; k < all.GetN(); k++) all.Get(k)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&Hop));
  bd.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&BottleneckTx));
  if (order) bd.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&BottleneckOrder));

  for (uint32_t i = 0; i < flows; i++) {
    uint16_t port = 5000 + i % 60000;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(c.Get(i)); sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&Rx));
    if (perFlow) {
      gFlowRxBytes.resize(flows);
      sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&FlowRx, i));
    }
    BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(caddr[i], port));
    bs.SetAttribute("MaxBytes", UintegerValue(0)); bs.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer app = bs.Install(s.Get(i));
    app.Start(Seconds(i < startList.size() ? startList[i] : startJitter > 0 ? startAt->GetValue(0, startJitter) : 0));
  }
  Simulator::Stop(Seconds(stop));
  Simulator::Run();
  double cap = DataRate(rate).GetBitRate() * stop / 8.0;
  std::printf("packet_hops %llu\n", (unsigned long long)gHops);
  std::printf("utilisation %.2f %%\n", 100.0 * gBottleneckBytes / cap);
  std::printf("goodput_mbps %.1f\n", gRxBytes * 8 / stop / 1e6);
  for (uint32_t i = 0; i < gFlowRxBytes.size(); i++)
    std::printf("flow_rx_bytes %u %llu\n", i, (unsigned long long)gFlowRxBytes[i]);
  Simulator::Destroy();
  return 0;
}
