# How long triage and ns-3 send the same packets through a dumbbell's bottleneck
# (benchmarks/scaling.sh --order). Run as
#   awk -F, -f bottleneck_order.awk NS3_OUTPUT PACKETS_CSV
# NS3_OUTPUT: the ns-3 program's output with --order=1, whose lines "bott T FLOW SEQ LEN"
# are the bottleneck's departures in order. PACKETS_CSV: triage's packet trace (`--out`
# with `packet_trace = true`); its rows on link r1->r2 with event "enqueue", in order, are
# the same departures (the queues are FIFO, so the order packets enter one is the order they
# leave it; dropped packets are "drop" rows), their sender "s<FLOW>:port".
# Prints "N T": N packets alike as (flow, sequence number, payload) before the first
# difference, and T the time (ms) the first different packet entered triage's queue, or "-"
# when one list ended first.
FNR == 1 { file++ }
file == 1 {
  split($0, f, " ")
  if (f[1] == "bott") ns[++nn] = f[3] " " f[4] " " f[5]
  next
}
file == 2 && $6 == "r1->r2" && $7 == "enqueue" {
  src = $8
  sub(/^s/, "", src)
  sub(/:.*/, "", src)
  k++
  if (k > nn) { print k - 1, "-"; done = 1; exit }
  if (ns[k] != src " " $11 " " $13) { print k - 1, $5; done = 1; exit }
}
END { if (!done) print (k < nn ? k : nn), "-" }
