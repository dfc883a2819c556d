# The throughput-interactivity front of a served workload, written by
# `preserve-model serve --plot FILE`: output tokens/s per device against tokens/s per user, one
# curve per mode (each point a concurrency, labelled), and the static estimate's batch as a
# point per mode. Draws only; every number comes from the CSV or the variables.
# Variables (gnuplot -e): csv, out, term, ttl (the workload), batch (the static estimate's),
# sx0, sy0, sx1, sy1, sx2, sy2 (its point in serial, fused and preserve: tokens/s per user, per
# device). Points whose sequences' cache exceeds the HBM (fits_hbm 0) are not drawn: the key
# says so.
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
# How many points were left out (their cache exceeds the HBM).
stats csv using (column("fits_hbm") > 0 ? 0 : 1) nooutput
dropped = int(STATS_sum)
set label 1 (dropped > 0 ? sprintf("%d %s not drawn: the sequences' cache exceeds the HBM", dropped, dropped > 1 ? "concurrencies" : "concurrency") : "") at graph 0.02, graph 0.04 left font ",10"
plot csv using (fits(x("serial"))):(fits(y("serial"))) with linespoints ls 1 title "serial", \
     csv using (fits(x("fused"))):(fits(y("fused"))) with linespoints ls 2 title "fused", \
     csv using (fits(x("preserve"))):(fits(y("preserve"))) with linespoints ls 3 title "preserve", \
     csv using (fits(x("preserve"))):(fits(y("preserve"))):(sprintf("%d", column("concurrency"))) with labels offset char 0.8, char 0.7 font ",9" tc rgb '#555555' notitle, \
     '+' using (sx0):(sy0) every ::0::0 with points pt 6 ps 2.2 lw 2 lc rgb '#4C72B0' title sprintf("static batch %d (serial, fused, preserve)", batch), \
     '+' using (sx1):(sy1) every ::0::0 with points pt 4 ps 2.2 lw 2 lc rgb '#DD8452' notitle, \
     '+' using (sx2):(sy2) every ::0::0 with points pt 8 ps 2.4 lw 2 lc rgb '#55A868' notitle
