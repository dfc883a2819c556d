# The disaggregated front against the co-located fronts, written by
# `preserve-model disagg --plot FILE`: output tokens/s per device (both pools' devices) against
# tokens/s per user, each point a decode concurrency, the disaggregated deployment in preserve
# and serial beside the co-located deployment (decode-first) on the prefill pool's chip and on
# the decode pool's chip at the same concurrency. Draws only; every number comes from the CSV.
# Variables (gnuplot -e): csv, out, term, ttl (the deployment), pchip and dchip (each pool's
# chips, for the key).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set datafile columnheaders
set termoption noenhanced
set grid lt 1 lw 1 lc rgb '#dddddd'
set title ttl
set xlabel "interactivity: output tokens/s per user (1 / TPOT)"
set ylabel "throughput: output tokens/s per device"
set logscale x 2
set key top left box opaque
set offsets graph 0.02, graph 0.02, graph 0.08, 0
set style line 1 lw 2 pt 7 ps 0.9 lc rgb '#55A868'
set style line 2 lw 2 pt 6 ps 0.9 lc rgb '#55A868' dt 2
set style line 3 lw 2 pt 5 ps 0.9 lc rgb '#4C72B0'
set style line 4 lw 2 pt 9 ps 0.9 lc rgb '#DD8452'
plot csv using (column("preserve_tokens_per_s_per_user")):(column("preserve_tokens_per_s_per_device")) \
       with linespoints ls 1 title "disaggregated, preserve", \
     csv using (column("serial_tokens_per_s_per_user")):(column("serial_tokens_per_s_per_device")) \
       with linespoints ls 2 title "disaggregated, serial", \
     csv using (column("colocated_prefill_chip_preserve_tokens_per_s_per_user")):(column("colocated_prefill_chip_preserve_tokens_per_s_per_device")) \
       with linespoints ls 3 title "co-located on ".pchip.", preserve", \
     csv using (column("colocated_decode_chip_preserve_tokens_per_s_per_user")):(column("colocated_decode_chip_preserve_tokens_per_s_per_device")) \
       with linespoints ls 4 title "co-located on ".dchip.", preserve"
