# Fig 8: PRESERVE's speedup over the serial baseline against the link bandwidth at 128 devices, one
# line per model and their mean (paper-dse scenario). Draws only; every number comes from the CSV
# written by scripts/fig8.sh (link_bandwidth_GBps, one column per model, mean_speedup).
# Variables (gnuplot -e): csv, out, term, models (the model columns, space-separated).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set xlabel "link bandwidth (GB/s per link, per direction)"
set ylabel "speedup PRESERVE vs serial (x)"
set title "Fig 8: PRESERVE speedup vs link bandwidth, 128 devices (paper-dse)\npaper: the mean speedup rises from 1.18x at 200 Gbit/s (25 GB/s) to 1.27x at 1000 Gbit/s (125 GB/s)"
set grid
set key outside right top
set xtics 12.5
plot for [i = 1:words(models)] csv using (column("link_bandwidth_GBps")):(column(word(models, i))) \
         with linespoints lw 1.5 dt i pt (3 + i) ps 1.0 title word(models, i), \
     csv using (column("link_bandwidth_GBps")):(column("mean_speedup")) with linespoints lw 3.5 pt 7 ps 1.3 lc rgb "black" title "mean"
