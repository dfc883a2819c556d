# The throughput-interactivity front of a served workload, written by
# `preserve-model serve --plot FILE`: output tokens/s per device against tokens/s per user, one
# curve per mode (each point a concurrency, labelled), and the static estimate's batch as a
# point per mode. With a family (serve --sweep AXIS=V1,V2,...) a front per value: the value's
# colour, preserve solid, serial dashed, fused dotted, the CSV's first column the value and a
# front's rows together. Draws only; every number comes from the CSV or the variables.
# Variables (gnuplot -e): csv, out, term, ttl (the workload), facts (what decided it), batch
# (the static estimate's), nfam (fronts), npts (concurrencies a front), famttl and famlabels
# (the family's axis title and values, "" without a family), rate (1: the points are request
# rates, serve --rate, labelled so), spts (per front, the static
# point in serial, fused and preserve: tokens/s per user, per device; six words a front).
# Points whose sequences' cache exceeds the HBM (fits_hbm 0) are not drawn: the key says so.
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
set grid lt 1 lw 1 lc rgb '#dddddd'
# What decided the figure (the datatypes, EP, the consumers, the runtime) on its own line.
if (exists("facts") && facts ne "") { ttl = ttl."\n".facts }
set title ttl
set xlabel "interactivity: output tokens/s per user (1 / TPOT)"
set ylabel "throughput: output tokens/s per device"
set logscale x 2
set key top right box opaque
set style line 1 lw 2 pt 7 ps 0.9 lc rgb '#4C72B0'
set style line 2 lw 2 pt 5 ps 0.9 lc rgb '#DD8452'
set style line 3 lw 2 pt 9 ps 1.1 lc rgb '#55A868'
set offsets graph 0.04, graph 0.04, graph 0.06, 0
set yrange [0:*]
fits(c) = column("fits_hbm") > 0 ? column(c) : NaN
x(m) = sprintf("%s_tokens_per_s_per_user", m)
y(m) = sprintf("%s_tokens_per_s_per_device", m)
# A point's label: its concurrency, or its request rate (rate 1: serve --rate).
lab(dummy) = (exists("rate") && rate) ? sprintf("%g/s", column("request_rate_per_s")) : sprintf("%g", column("concurrency"))
# Static point of front i (1-based), mode k (0 serial, 1 fused, 2 preserve).
sx(i, k) = real(word(spts, 6 * (i - 1) + 2 * k + 1))
sy(i, k) = real(word(spts, 6 * (i - 1) + 2 * k + 2))
# batch 0: no static point (a distribution of lengths is not the scenario's static batch).
st(v) = batch > 0 ? v : NaN
# How many points were left out (their cache exceeds the HBM), and, at request rates, how many
# a mode cannot serve (saturated: no TPOT to draw; the rate columns exist only then).
stats csv using (column("fits_hbm") > 0 ? 0 : 1) nooutput
dropped = int(STATS_sum)
saturated = 0
if (exists("rate") && rate) { stats csv using (column("fits_hbm") > 0 && column("serial_saturated") + column("fused_saturated") + column("preserve_saturated") > 0 ? 1 : 0) nooutput; saturated = int(STATS_sum) }
notes = (dropped > 0 ? sprintf("%d %s not drawn: the sequences' cache exceeds the HBM", dropped, dropped > 1 ? "points" : "point") : "")
if (saturated > 0) { notes = notes.(notes ne "" ? "\n" : "").sprintf("%d %s saturated in some mode: not drawn there", saturated, saturated > 1 ? "rates" : "rate") }
set label 1 notes at graph 0.02, graph 0.96 left font ",10"
if (nfam <= 1) {
plot csv using (fits(x("serial"))):(fits(y("serial"))) with linespoints ls 1 title "serial", \
     csv using (fits(x("fused"))):(fits(y("fused"))) with linespoints ls 2 title "fused", \
     csv using (fits(x("preserve"))):(fits(y("preserve"))) with linespoints ls 3 title "preserve", \
     csv using (fits(x("preserve"))):(fits(y("preserve"))):(lab(0)) with labels offset char 0.8, char 0.7 font ",9" tc rgb '#555555' notitle, \
     '+' using (st(sx(1, 0))):(sy(1, 0)) every ::0::0 with points pt 6 ps 2.2 lw 2 lc rgb '#4C72B0' title (batch > 0 ? sprintf("static batch %d (serial, fused, preserve)", batch) : ""), \
     '+' using (st(sx(1, 1))):(sy(1, 1)) every ::0::0 with points pt 4 ps 2.2 lw 2 lc rgb '#DD8452' notitle, \
     '+' using (st(sx(1, 2))):(sy(1, 2)) every ::0::0 with points pt 8 ps 2.4 lw 2 lc rgb '#55A868' notitle
} else {
# A colour per front (Dark2); rows (i-1) npts .. i npts - 1 of the CSV are front i's.
colour(i) = word("#1B9E77 #D95F02 #7570B3 #E7298A #66A61E #E6AB02 #A6761D #666666", i)
set key title famttl." (solid: preserve)"
plot for [i=1:nfam] csv every ::((i-1)*npts)::(i*npts-1) using (fits(x("preserve"))):(fits(y("preserve"))) with linespoints lw 2.5 pt 7 ps 0.8 lc rgb colour(i) title word(famlabels, i), \
     for [i=1:nfam] csv every ::((i-1)*npts)::(i*npts-1) using (fits(x("serial"))):(fits(y("serial"))) with lines lw 1.5 dt 2 lc rgb colour(i) notitle, \
     for [i=1:nfam] csv every ::((i-1)*npts)::(i*npts-1) using (fits(x("fused"))):(fits(y("fused"))) with lines lw 1.5 dt 3 lc rgb colour(i) notitle, \
     csv every ::((nfam-1)*npts)::(nfam*npts-1) using (fits(x("preserve"))):(fits(y("preserve"))):(lab(0)) with labels offset char 0.8, char 0.7 font ",9" tc rgb '#555555' notitle, \
     NaN with lines lw 1.5 dt 2 lc rgb '#333333' title "serial (dashed)", \
     NaN with lines lw 1.5 dt 3 lc rgb '#333333' title "fused (dotted)", \
     for [i=1:nfam] '+' using (st(sx(i, 2))):(sy(i, 2)) every ::0::0 with points pt 6 ps 2.2 lw 2 lc rgb colour(i) title (i == 1 && batch > 0 ? sprintf("static batch %d (preserve)", batch) : "")
}
