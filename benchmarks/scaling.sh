#!/usr/bin/env bash
# The scaling benchmark of README "Performance": N long NewReno bulk flows over a dumbbell
# (bottleneck RATE / 1 ms, access links at RATE / 0 ms, every queue 1000 packets DropTail,
# 2 MiB socket buffers, 5 s simulated) in triage and in ns-3 (benchmarks/ns3_dumbbell.cc,
# the same network), for every flow count and rate given. Prints a Markdown table: wall time
# of the whole process, packet-hops, packet-hops per second and peak resident memory.
#
#   benchmarks/scaling.sh [--flows "2 8 32 128 512"] [--rates "100Mbps 1Gbps 10Gbps"]
#                         [--stop 5] [--repeat 5] [--no-ns3] [--no-triage]
#                         [--triage target/release/triage] [--out DIR]
#                         [--shares [--seeds "1 2 3"] [--start-jitter 0.1] [--order]]
#
# --out DIR (timing, not --shares): also DIR/grid.csv, the grid table's numbers a row a cell
# (empty fields where a side did not run), and per rate DIR/pairs-RATE/, what `triage bench
# --out` writes for the pair of the fewest and the most flows (runs.csv: every repetition of
# both; per_hop_cost_vs_first.svg: each pair's ratio, repetition by repetition), and with
# more than two flow counts DIR/curve-RATE/, the same for the curve's run.
#
# --shares: instead of timing, what the flows got in each cell, triage beside ns-3, triage
# with ns-3's rules where its defaults differ (newreno_growth = "per_ack", ns3_compat = true:
# SYNs without the MSS option, ssthresh from the pipe after the ACK, PRR's conservative
# bound, the whole receive buffer offered, lost retransmissions left to the RTO, and with
# send_buffer = "2MiB" (the program's SndBufSize) its buffer refills and NextSeg() rule (3);
# and links with overhead = "2B", ns-3's PPP header): the bytes delivered to the receivers over the run
# (triage's flows' delivered_bytes, the ns-3 program's per-flow PacketSink counts), Jain's
# fairness index over the flows and the smallest flow's bytes over the largest's; means over
# the seeds given (triage's scenario seed, ns-3's RngRun). --start-jitter S starts each
# sender at a uniform random time in [0, S) seconds (triage's [[flows]] start_jitter); with
# triage beside it, ns-3's senders start at triage's draws (the program's --starts), so each
# seed is one experiment in both; with --no-triage, at ns-3's own (--startJitter). Without
# it nothing in either simulator is random and every seed gives the same run.
#
# --order (with --shares): also how long the two simulators send the same packets: the
# bottleneck's departures in order (triage's packet_trace, the ns-3 program's --order) as
# (flow, sequence number, payload), compared one by one; per cell and seed, how many are
# alike before the first difference and when that one left triage's bottleneck queue.
# Slower (every packet is written out): a shorter --stop does for the opening.
#
# triage's "sim M hops/s" is the median over --repeat runs of the simulation alone in one
# process (`triage bench --repeat`); its wall time and peak memory are those of one whole
# process (setup included), as ns-3's.
#
# Then, for triage, a second table: per rate, the cost per packet-hop of the largest flow
# count against the smallest, as the median over --repeat back-to-back pairs of runs in
# one process (`triage bench --scenario SMALL --scenario LARGE`, its per_hop_cost_vs_first),
# and the same over the second half of each run (steady_per_hop_cost_vs_first: connections
# open, initial windows and the losses they bring mostly over), each beside the middle half
# of its pairs (first to third quartile: how far one pair strays from another).
# Each pair runs within a fraction of a second, so a machine whose speed drifts from one
# second to the next moves both of a pair; the ratio of two medians taken from separate
# cells does not cancel that.
#
# With more than two flow counts, a third table: the curve, every flow count's cost per
# packet-hop against the fewest flows', all counts of a rate in one `triage bench` run
# (each repetition runs them one after the other, fewest first), whole runs and second
# halves, each with its middle half: where between the fewest and the most flows the cost
# rises.
#
# With more than one rate, a table per flow count: that count at every rate in one `triage
# bench` run, and per repetition the costliest rate's cost per packet-hop over the
# cheapest's (median over the repetitions, its middle half, and which rates those were most
# often), whole runs and second halves: how flat the cost is from the slowest bottleneck to
# the fastest. With --out, those runs' files are in DIR/rates-FLOWS/.
#
# With more than one cell, a last table: the whole grid at once, every cell timed in one
# `triage bench` run, and per repetition the costliest cell's cost per packet-hop over the
# cheapest's (median over the repetitions, with its middle half, and which cells those were
# most often), whole runs and second halves: how flat the cost is across flow counts and
# rates together. With --out, that run's files are in DIR/grid-spread/.
#
# Needs /usr/bin/time, and for the ns-3 side Debian's libns3-dev (the program is compiled
# into $TMPDIR, never into the repository). Runs from the repository root.
set -euo pipefail
flows="2 8 32 128 512"
rates="100Mbps 1Gbps 10Gbps"
stop=5
repeat=5
ns3=1
ours=1
shares=0
order=0
seeds=1
jitter=0
triage=target/release/triage
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --flows) flows=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --stop) stop=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-ns3) ns3=0; shift ;;
    --no-triage) ours=0; shift ;;
    --triage) triage=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shares) shares=1; shift ;;
    --order) shares=1; order=1; shift ;;
    --seeds) seeds=$2; shift 2 ;;
    --start-jitter) jitter=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -n "$out" ]; then
  [ "$shares" = 1 ] && { echo "scaling.sh: --out is for the timing grid, not --shares or --order" >&2; exit 2; }
  mkdir -p "$out" || { echo "scaling.sh: --out $out: cannot make the directory" >&2; exit 2; }
  out=$(cd "$out" && pwd)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/triage-scaling.XXXXXX")
here=$(cd "$(dirname "$0")" && pwd)
if [ "$ns3" = 1 ]; then
  libs=$(ls /usr/lib/x86_64-linux-gnu/libns3-*.so | sed 's|.*/lib\(ns3-[^/]*\)\.so$|-l\1|' | tr '\n' ' ')
  # shellcheck disable=SC2086
  g++ -O2 -std=c++17 "$here/ns3_dumbbell.cc" -o "$work/ns3_dumbbell" -I/usr/include $libs
fi

# scenario FLOWS RATE: a triage scenario file for one cell.
scenario() {
  local n=$1 rate=$2 f=$work/dumbbell-$1-$2.toml
  {
    echo "name = \"dumbbell-$n-$rate\""
    echo "seed = ${seed:-1}"
    echo "stop = \"${stop}s\""
    echo "[transport]"
    echo "cc = \"newreno\""
    # --shares compares what each flow got, so triage runs ns-3's rules where they differ
    # from its defaults: NewReno's per-ACK window growth (ns-3's TcpNewReno), ns3_compat's
    # TCP rules, the program's 2 MiB send buffer (SndBufSize) and the 2-byte PPP header
    # every ns-3 point-to-point device adds to a packet's serialization.
    [ "$shares" = 1 ] && echo "newreno_growth = \"per_ack\"" && echo "ns3_compat = true"
    echo "receive_buffer = \"2MiB\""
    [ "$shares" = 1 ] && echo "send_buffer = \"2MiB\""
    echo "[measure]"
    echo "interval = \"0ms\""
    [ "$order" = 1 ] && echo "packet_trace = true"
    echo "[topology]"
    echo "kind = \"dumbbell\""
    echo "pairs = $n"
    local framing=
    [ "$shares" = 1 ] && framing=", overhead = \"2B\""
    echo "bottleneck = { rate = \"$rate\", delay = \"1ms\", queue = { packets = 1000 }$framing }"
    echo "access = { rate = \"$rate\", delay = \"0ms\", queue = { packets = 1000 }$framing }"
    for ((i = 0; i < n; i++)); do
      printf '[[flows]]\nname = "f%d"\nclient = "s%d"\nserver = "c%d"\nclient_app = { kind = "bulk", size = "1000GB" }\n' "$i" "$i" "$i"
      [ "$jitter" = 0 ] || echo "start_jitter = \"${jitter}s\""
    done
  } > "$f"
  echo "$f"
}

# timed OUT CMD...: runs CMD with stdout to OUT; prints "wall_s peak_kib".
timed() {
  local out=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/mem" "$@" > "$out"
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(tail -1 "$work/mem")" | awk '{printf "%.3f %d\n", $1 / 1000, $2}'
}

# shares FILE: "total_bytes jain min_over_max" of the per-flow byte counts in FILE, one a line.
shares() {
  awk '{ s += $1; q += $1 * $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
       END { printf "%d %.3f %.2f\n", s, (q > 0 ? s * s / (NR * q) : 0), (hi > 0 ? lo / hi : 0) }' "$1"
}

# mean FILE: the means over the seeds' lines of shares output (total bytes, Jain, min/max).
mean() {
  [ -s "$1" ] && awk '{ s += $1; j += $2; m += $3 } END { printf "%d %.3f %.2f\n", s / NR, j / NR, m / NR }' "$1"
}

# mb BYTES: megabytes, two decimals (nothing for nothing).
mb() { [ -n "${1:-}" ] && awk "BEGIN{printf \"%.2f\", $1 / 1e6}"; }

if [ "$shares" = 1 ]; then
  nseeds=$(echo $seeds | wc -w)
  echo "| flows | rate | triage delivered MB | ns-3 delivered MB | triage - ns-3 | triage Jain | ns-3 Jain | triage min/max | ns-3 min/max |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for rate in $rates; do
    for n in $flows; do
      : > "$work/t.runs"; : > "$work/n.runs"
      for seed in $seeds; do
        if [ "$ours" = 1 ]; then
          # Exit status 3: flows still open at the stop, as long flows are here.
          out=()
          [ "$order" = 1 ] && rm -rf "$work/o" && out=(--out "$work/o")
          "$triage" run "$(scenario "$n" "$rate")" --json "${out[@]}" > "$work/s.json" 2> "$work/s.err" ||
            [ $? = 3 ] || { cat "$work/s.err" >&2; exit 1; }
          sed -n 's/.*"delivered_bytes": *\([0-9]*\).*/\1/p' "$work/s.json" > "$work/t.bytes"
          shares "$work/t.bytes" >> "$work/t.runs"
        fi
        if [ "$ns3" = 1 ]; then
          # The same experiment: with triage beside it, ns-3's senders start when triage's
          # drawn starts say; alone, at ns-3's own draws.
          starts=
          if [ "$ours" = 1 ] && [ "$jitter" != 0 ]; then
            # The variant's resolved flows (the last "resolved" in the document), each with
            # its start_ms and, when the draw is finer than a microsecond, its exact start_ns:
            # ns-3 gets the same nanosecond (a start rounded to the microsecond reorders
            # near-simultaneous handshakes).
            starts=$(awk -v n="$n" '/"resolved": *[{]/ {r = 1; k = 0}
              r && /"start_ms":/ {k++; v = $2; gsub(/,/, "", v); s[k] = v * 1e6}
              r && /"start_ns":/ {v = $2; gsub(/,/, "", v); s[k] = v}
              END {for (i = 1; i <= n; i++) printf "%s%.9f", (i > 1 ? "," : ""), s[i] / 1e9}' "$work/s.json")
          fi
          # (ns-3's command line refuses an empty value: --starts only with starts.)
          "$work/ns3_dumbbell" --flows="$n" --rate="$rate" --stop="$stop" --perFlow=1 --order="$order" \
            --startJitter="$jitter" --run="$seed" ${starts:+--starts="$starts"} > "$work/n.txt"
          awk '/^flow_rx_bytes/ {print $3}' "$work/n.txt" > "$work/n.bytes"
          shares "$work/n.bytes" >> "$work/n.runs"
        fi
        if [ "$order" = 1 ] && [ "$ours" = 1 ] && [ "$ns3" = 1 ]; then
          # FIFO queues: the order packets enter triage's bottleneck queue (dropped ones
          # aside) is the order they leave it. Its senders are s<i>, their packets' source
          # "s<i>:port"; ns-3's lines are "bott T FLOW SEQ LEN".
          alike=$(awk -F, -f "$here/bottleneck_order.awk" "$work/n.txt" "$work/o/packets.csv")
          echo "| $n | $rate | $seed | ${alike% *} | ${alike#* } |" >> "$work/order.rows"
        fi
      done
      t=(); m=()
      [ "$ours" = 1 ] && read -r -a t < <(mean "$work/t.runs")
      [ "$ns3" = 1 ] && read -r -a m < <(mean "$work/n.runs")
      diff=
      [ -n "${t[0]:-}" ] && [ -n "${m[0]:-}" ] && diff=$(awk "BEGIN{printf \"%+.2f%%\", 100 * (${t[0]} - ${m[0]}) / ${m[0]}}")
      echo "| $n | $rate | $(mb "${t[0]:-}") | $(mb "${m[0]:-}") | $diff | ${t[1]:-} | ${m[1]:-} | ${t[2]:-} | ${m[2]:-} |"
    done
  done
  [ "$nseeds" = 1 ] || echo "(means over seeds: $seeds)"
  if [ -s "$work/order.rows" ]; then
    echo
    echo "| flows | rate | seed | packets alike at the bottleneck | first difference entered triage's queue at (ms) |"
    echo "| --- | --- | --- | --- | --- |"
    cat "$work/order.rows"
  fi
  rm -rf "$work"
  exit 0
fi

# Wall times are of the whole process (setup included); "sim M hops/s" is triage's
# packet-hops over the simulation alone (`triage bench --repeat`'s median wall time).
echo "| flows | rate | triage wall s | triage packet-hops | triage M hops/s | triage sim M hops/s | triage peak MiB | ns-3 wall s | ns-3 packet-hops | ns-3 M hops/s | ns-3 peak MiB | wall ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
[ -n "$out" ] && echo "flows,rate,triage_wall_s,triage_packet_hops,triage_mhops_per_s,triage_sim_mhops_per_s,triage_peak_mib,ns3_wall_s,ns3_packet_hops,ns3_mhops_per_s,ns3_peak_mib,ns3_wall_over_triage_wall" > "$out/grid.csv"
for rate in $rates; do
  for n in $flows; do
    row="| $n | $rate"
    if [ "$ours" = 1 ]; then
      f=$(scenario "$n" "$rate")
      read -r tw tm < <(timed "$work/t.json" "$triage" bench --scenario "$f" --repeat 1 --json)
      th=$(grep -m1 '"packet_hops"' "$work/t.json" | tr -dc 0-9)
      "$triage" bench --scenario "$f" --repeat "$repeat" --json > "$work/r.json"
      ts=$(sed -n 's/.*"packet_hops_per_s": *\([0-9.e+]*\).*/\1/p' "$work/r.json" | head -1)
      row="$row | $tw | $th | $(awk "BEGIN{printf \"%.2f\", $th / $tw / 1e6}") | $(awk "BEGIN{printf \"%.2f\", $ts / 1e6}") | $(( tm / 1024 ))"
    else
      row="$row | | | | | "
      tw=
    fi
    if [ "$ns3" = 1 ]; then
      read -r nw nm < <(timed "$work/n.txt" "$work/ns3_dumbbell" --flows="$n" --rate="$rate" --stop="$stop")
      nh=$(awk '/^packet_hops/ {print $2}' "$work/n.txt")
      ratio=
      [ -n "$tw" ] && ratio=$(awk "BEGIN{printf \"%.1fx\", $nw / $tw}")
      row="$row | $nw | $nh | $(awk "BEGIN{printf \"%.3f\", $nh / $nw / 1e6}") | $(( nm / 1024 )) | $ratio"
    else
      row="$row | | | | | "
    fi
    echo "$row |"
    # The same cells as CSV: the row's fields without the bars (no field holds a comma).
    [ -n "$out" ] && echo "$row" | sed 's/^| //; s/ *| */,/g; s/x$//' >> "$out/grid.csv"
  done
done

if [ "$ours" = 1 ]; then
  small=$(echo $flows | awk '{print $1}')
  large=$(echo $flows | awk '{print $NF}')
  echo
  echo "| rate | triage cost per packet-hop, $large flows against $small (median of $repeat pairs) | middle half of the pairs | the same over the second halves (steady state) | middle half |"
  echo "| --- | --- | --- | --- | --- |"
  # The rows of a `triage bench --json` run (file $1) for every scenario after the first:
  # "| RATE ($2) |", the flow count from the scenario's name ("dumbbell-FLOWS-RATE") when $3
  # is "flows", then its cost per packet-hop against the first scenario's (the median of the
  # pairs, their middle half: first to third quartile), whole runs and second halves. The
  # pair table is the two-scenario case of the curve, printed by the same program; a value
  # the run did not give prints as "n/a".
  # half: a `--json` middle half (the two lines after the current one, pretty-printed) as
  # "Q1-Q3", for the awk programs below.
  half='function half(  a, b) { getline a; getline b; gsub(/[ ,]/, "", a); gsub(/[ ,]/, "", b); return sprintf("%.2f-%.2f", a, b) }'
  ratio_rows() {
    awk -v rate="$2" -v with_flows="${3:-}" "$half"'
      function ratio(v) { return v == "" ? "n/a" : sprintf("%.2fx", v) }
      function row() {
        if (seen) printf "| %s |%s %s | %s | %s | %s |\n", rate, (with_flows == "flows" ? " " n " |" : ""),
          ratio(x), (xm == "" ? "n/a" : xm), ratio(y), (ym == "" ? "n/a" : ym)
        seen = 0; x = ""; xm = ""; y = ""; ym = ""
      }
      /"scenario": / { row(); n = $2; gsub(/[",]/, "", n); sub(/^dumbbell-/, "", n); sub(/-.*/, "", n) }
      /"per_hop_cost_vs_first":/ { x = $2; gsub(/,/, "", x); seen = 1 }
      /"per_hop_cost_vs_first_middle_half":/ { xm = half(); seen = 1 }
      /"steady_per_hop_cost_vs_first":/ { y = $2; gsub(/,/, "", y); seen = 1 }
      /"steady_per_hop_cost_vs_first_middle_half":/ { ym = half(); seen = 1 }
      END { row() }' "$1"
  }
  # bench_run NAME FILE ARGS...: one `triage bench --json` run (ARGS: its --scenario
  # options) into FILE, with --out its files in DIR/NAME/.
  bench_run() {
    local name=$1 file=$2 keep=()
    shift 2
    [ -n "$out" ] && keep=(--out "$out/$name")
    "$triage" bench "$@" --repeat "$repeat" --json "${keep[@]}" > "$file"
  }
  # cells "FLOWS" "RATES": sets args to the --scenario options of every cell of those flow
  # counts and rates, rate by rate, fewest flows first.
  cells() {
    local n rate
    args=()
    for rate in $2; do
      for n in $1; do args+=(--scenario "$(scenario "$n" "$rate")"); done
    done
  }
  for rate in $rates; do
    bench_run "pairs-$rate" "$work/pair.json" --scenario "$(scenario "$small" "$rate")" --scenario "$(scenario "$large" "$rate")"
    ratio_rows "$work/pair.json" "$rate"
  done
  if [ "$(echo $flows | wc -w)" -gt 2 ]; then
    echo
    echo "| rate | flows | triage cost per packet-hop against $small flows (median of $repeat repetitions) | middle half | the same over the second halves | middle half |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for rate in $rates; do
      cells "$flows" "$rate"
      bench_run "curve-$rate" "$work/curve.json" "${args[@]}"
      ratio_rows "$work/curve.json" "$rate" flows
    done
  fi
  # spread_row LABEL FILE: the row of a `triage bench --json` run of several cells (file
  # FILE): per repetition the costliest cell's cost per packet-hop over the cheapest's (the
  # median, its middle half, the cells most often costliest and cheapest; a cell named
  # "dumbbell-FLOWS-RATE" prints as "FLOWS flows RATE"), whole runs and second halves.
  spread_row() {
    awk -v label="$1" "$half"'
      function name(v) { v = $2; gsub(/[",]/, "", v); sub(/^dumbbell-/, "", v); sub(/-/, " flows ", v); return v }
      /^  "spread": [{]/ { k = 1 } /^  "steady_spread": [{]/ { k = 2 }
      k && /"per_hop_cost_max_over_min":/ { v = $2; gsub(/,/, "", v); x[k] = sprintf("%.2fx", v) }
      k && /"per_hop_cost_max_over_min_middle_half":/ { m[k] = half() }
      k && /"costliest":/ { hi[k] = name() }
      k && /"cheapest":/ { lo[k] = name() }
      END {
        for (i = 1; i <= 2; i++) if (x[i] == "") { x[i] = "n/a"; m[i] = "n/a" }
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, x[1], m[1], hi[1], lo[1], x[2], m[2], hi[2], lo[2]
      }' "$2"
  }
  if [ "$(echo $rates | wc -w)" -gt 1 ]; then
    # The other axis: each flow count at every rate in one `triage bench` run (each
    # repetition runs the rates one after the other, in the order given), and per
    # repetition the costliest rate's cost per packet-hop over the cheapest's.
    echo
    echo "| flows | triage costliest rate's cost per packet-hop over the cheapest's (median of $repeat repetitions) | middle half | costliest | cheapest | the same over the second halves | middle half | costliest | cheapest |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for n in $flows; do
      cells "$n" "$rates"
      bench_run "rates-$n" "$work/rates.json" "${args[@]}"
      spread_row "$n flows" "$work/rates.json"
    done
  fi
  ncells=$(( $(echo $flows | wc -w) * $(echo $rates | wc -w) ))
  if [ "$ncells" -gt 1 ]; then
    # The whole grid at once: every cell in one `triage bench` run (each repetition runs them
    # all, rate by rate, fewest flows first), and per repetition the costliest cell's cost
    # per packet-hop over the cheapest's (its "spread").
    echo
    echo "| grid | triage costliest cell's cost per packet-hop over the cheapest's (median of $repeat repetitions) | middle half | costliest | cheapest | the same over the second halves | middle half | costliest | cheapest |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cells "$flows" "$rates"
    bench_run grid-spread "$work/grid.json" "${args[@]}"
    spread_row "$ncells cells" "$work/grid.json"
  fi
fi
rm -rf "$work"
