# Fig 2: per-device memory of one layer's Attention (weights + KV cache) and MLP (weights)
# against the tensor-parallel device count, with the bundled accelerators' L2 sizes as horizontal
# lines (models with equal footprints overlap: each has its own dash and point type). Draws only; every number comes from the CSV and the variables written by scripts/fig2.sh.
# Variables (gnuplot -e): csv (devices, attn_kv_MiB_<model>..., mlp_MiB_<model>...), out, term,
#   models (the model names, space-separated), l2names and l2mib (the accelerators sharing each
#   L2 size and that size in MiB, space-separated, in the same order).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set logscale y 2
set xrange [0.8:20]
set xtics (1, 2, 4, 8, 16)
set xlabel "devices (tensor parallel)"
set ylabel "per-device memory of one layer (MiB)"
set grid
set key bottom left box opaque
set style line 100 dashtype 2 lw 1 lc rgb "#777777"
do for [i = 1:words(l2mib)] {
    set arrow i from graph 0, first word(l2mib, i) + 0 to graph 1, first word(l2mib, i) + 0 nohead ls 100 back
    set label i sprintf("%s L2 %s MiB", word(l2names, i), word(l2mib, i)) right at graph 0.98, first word(l2mib, i) + 0 offset 0,0.45 font ",8" tc rgb "#555555"
}
set multiplot layout 1,2 title "Fig 2: per-layer, per-device footprint vs device count (int8; batch and context of the bundled scenarios)\npaper: footprints fall with device count; by 16 devices even the largest models fit the L2 of current accelerators"
set title "Attention: weights + KV cache"
plot for [i = 1:words(models)] csv using (column("devices")):(column("attn_kv_MiB_".word(models, i))) \
     with linespoints lw 2 dt i pt (3 + i) ps 1.3 title word(models, i)
set title "MLP: weights"
plot for [i = 1:words(models)] csv using (column("devices")):(column("mlp_MiB_".word(models, i))) \
     with linespoints lw 2 dt i pt (3 + i) ps 1.3 title word(models, i)
unset multiplot
