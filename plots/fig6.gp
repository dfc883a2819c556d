# Fig 6: PRESERVE's request time against the L2 capacity, normalised to its value at the smallest
# L2, one line per model (paper-dse scenario). Draws only; every number comes from the CSV written
# by scripts/fig6.sh (l2_capacity_MiB, then one column per model holding the normalised time).
# Variables (gnuplot -e): csv, out, term, models (the model columns, space-separated).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set xlabel "L2 capacity (MiB)"
set ylabel "PRESERVE request time / its value at the smallest L2 (1)"
set title "Fig 6: PRESERVE latency vs L2 capacity, normalised to the smallest L2 (paper-dse)\npaper: -20% to -36% (average -25%) as L2 grows; most models saturate at 136-144 MB"
set grid
set key bottom left
set xtics 32
# The paper's saturation band (a statement of the paper, not data).
set object 1 rect from first 136, graph 0 to first 144, graph 1 fc rgb "#dddddd" fs solid 0.5 noborder behind
set label 1 "paper: saturation 136-144 MB" at first 144, graph 0.97 offset 0.5,0 font ",9" tc rgb "#777777"
plot for [i = 1:words(models)] csv using (column("l2_capacity_MiB")):(column(word(models, i))) \
     with linespoints lw 2 dt i pt (3 + i) ps 1.0 title word(models, i)
