// Issue 10 check: N NewReno bulk flows over a high-rate dumbbell, every link a point-to-point
// device with a DropTail queue of its own and no queue disc (as triage models a link), so
// that the same parameters mean the same network in both simulators.
// s_i -> R1 -> bottleneck -> R2 -> c_i. Prints the bottleneck's utilisation (IP bytes sent
// over capacity x time), each flow's goodput (and completion with --bytes) and its TCP
// congestion-state changes. ns-3 3.37 drops at a full device queue silently in the traffic
// control layer (no queue disc is installed), so drops are not counted here.
// Build: g++ -O2 -std=c++17 highrate_dumbbell.cc -o highrate_dumbbell -I/usr/include $(ls
// /usr/lib/x86_64-linux-gnu/libns3-*.so | sed 's|.*/lib\(ns3-[^/]*\)\.so$|-l\1|') (as
// ../shared/reference/ns3/build.sh does).
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <cstdio>
using namespace ns3;

static uint64_t gBottleneckBytes = 0;
static std::vector<uint64_t> gRx;
static std::vector<uint32_t> gRtos;
static std::vector<double> gFirstRecovery;
static std::vector<double> gDone;
static uint64_t gBytes = 0;

static void BottleneckTx(Ptr<const Packet> p) { gBottleneckBytes += p->GetSize() - 2; } // minus PPP header
static void Rx(uint32_t i, Ptr<const Packet> p, const Address&) {
  gRx[i] += p->GetSize();
  if (gBytes > 0 && gRx[i] >= gBytes && gDone[i] < 0) gDone[i] = Simulator::Now().GetSeconds();
}
static void CongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s) {
  if (s == TcpSocketState::CA_RECOVERY && gFirstRecovery[i] < 0) gFirstRecovery[i] = Simulator::Now().GetSeconds();
  if (s == TcpSocketState::CA_LOSS) gRtos[i]++;
  std::printf("state flow %u t_ms %.3f %s\n", i, Simulator::Now().GetSeconds() * 1e3, TcpSocketState::TcpCongStateName[s]);
}
static void Hook(uint32_t i, Ptr<Application> app) {
  Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
  s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, i));
}

int main(int argc, char** argv) {
  std::string rate = "10Gbps", accessRate = "10Gbps", delay = "1ms", accessDelay = "0ms", cca = "ns3::TcpNewReno";
  uint32_t queue = 1000, accessQueue = 1000, flows = 2, rcvBuf = 64 << 20;
  double stop = 1.5;
  CommandLine cmd;
  cmd.AddValue("rate", "bottleneck rate", rate);
  cmd.AddValue("delay", "bottleneck one-way delay", delay);
  cmd.AddValue("queue", "bottleneck DropTail queue, packets", queue);
  cmd.AddValue("accessRate", "access link rate", accessRate);
  cmd.AddValue("accessDelay", "access link one-way delay", accessDelay);
  cmd.AddValue("accessQueue", "access DropTail queue, packets", accessQueue);
  cmd.AddValue("flows", "number of bulk flows (pairs)", flows);
  cmd.AddValue("rcvBuf", "send and receive buffer, bytes", rcvBuf);
  cmd.AddValue("stop", "simulated seconds", stop);
  cmd.AddValue("cca", "congestion control", cca);
  cmd.AddValue("bytes", "bytes per flow, 0 = unlimited", gBytes);
  cmd.Parse(argc, argv);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(cca));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(rcvBuf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  gRx.assign(flows, 0); gDone.assign(flows, -1); gRtos.assign(flows, 0); gFirstRecovery.assign(flows, -1);

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
  a.SetBase("10.9.0.0", "255.255.255.0"); a.Assign(bd); tch.Uninstall(bd);
  std::vector<NetDeviceContainer> all;
  for (uint32_t i = 0; i < flows; i++) {
    NetDeviceContainer d = acc.Install(s.Get(i), r.Get(0));
    a.SetBase(Ipv4Address(("10.1." + std::to_string(i) + ".0").c_str()), "255.255.255.0"); a.Assign(d); tch.Uninstall(d);
    NetDeviceContainer e = acc.Install(r.Get(1), c.Get(i));
    a.SetBase(Ipv4Address(("10.2." + std::to_string(i) + ".0").c_str()), "255.255.255.0");
    caddr.push_back(a.Assign(e).GetAddress(1)); tch.Uninstall(e);
    all.push_back(d); all.push_back(e);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  bd.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&BottleneckTx));

  for (uint32_t i = 0; i < flows; i++) {
    uint16_t port = 5000 + i;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(c.Get(i)); sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&Rx, i));
    BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(caddr[i], port));
    bs.SetAttribute("MaxBytes", UintegerValue(gBytes)); bs.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer app = bs.Install(s.Get(i)); app.Start(Seconds(0));
    Simulator::Schedule(NanoSeconds(1), &Hook, i, app.Get(0));
  }
  Simulator::Stop(Seconds(stop));
  Simulator::Run();
  double cap = DataRate(rate).GetBitRate() * stop / 8.0;
  std::printf("utilisation %.2f %% (IP bytes %llu over %.3f s)\n", 100.0 * gBottleneckBytes / cap,
              (unsigned long long)gBottleneckBytes, stop);
  for (uint32_t i = 0; i < flows; i++)
    std::printf("flow %u goodput_mbps %.1f first_recovery_ms %.3f rtos %u fct_ms %.1f\n", i, gRx[i] * 8 / stop / 1e6,
                gFirstRecovery[i] * 1e3, gRtos[i], gDone[i] * 1e3);
  Simulator::Destroy();
  return 0;
}
