# Fig 10: PRESERVE's speedup over the serial baseline against the tensor-parallel device count,
# one line per model (paper-dse scenario, ideal sharding). Draws only; every number comes from
# the CSVs written by scripts/fig10.sh (devices, speedup_preserve_vs_serial, fits_hbm); a point
# whose weights and KV cache exceed the HBM (fits_hbm 0) is ringed.
# Variables (gnuplot -e): dir (holding fig10-<model>.csv), out, term, models (space-separated).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set xrange [0.8:160]
set xtics 1, 2, 128
set xlabel "devices (tensor parallel)"
set ylabel "speedup PRESERVE vs serial (x)"
set title "Fig 10: PRESERVE speedup vs tensor-parallel scale-out (paper-dse)\npaper: the speedup rises up to 32 devices and falls beyond"
set grid
set key outside right top
# The paper's peak (a statement of the paper, not data).
set arrow from first 32, graph 0 to first 32, graph 1 nohead dashtype 4 lw 1.5 lc rgb "#888888"
set label "paper: peak at 32" at first 32, graph 0.97 offset 0.5,0 font ",9" tc rgb "#777777"
# Every point is plotted (a data set with none would warn), the ring sized 0 where it fits.
ring(dummy) = column("fits_hbm") == 0 ? 2.4 : 0
plot for [i = 1:words(models)] dir . "/fig10-" . word(models, i) . ".csv" \
     using (column("devices")):(column("speedup_preserve_vs_serial")) with linespoints lw 2 dt i pt (3 + i) ps 1.2 title word(models, i), \
     for [i = 1:words(models)] dir . "/fig10-" . word(models, i) . ".csv" \
     using (column("devices")):(column("speedup_preserve_vs_serial")):(ring(0)) with points pt 6 ps variable lw 1.5 lc rgb "#000000" notitle, \
     NaN with points pt 6 ps 2.4 lw 1.5 lc rgb "#000000" title "ringed: weights + KV > HBM"
