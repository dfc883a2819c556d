# Fig 4: PRESERVE's speedup over the serial baseline on the batch x sequence grid, one heatmap per
# model (4 NPUs). Each grid point is a cell centred on it on the log2 axes (from x/sqrt2 to
# x*sqrt2) with its value printed; invalid points (NaN) stay blank, labelled "invalid"; points whose
# weights and KV cache exceed the HBM (fits_hbm 0) are hatched and their values starred. Draws only; every number
# comes from the CSVs written by scripts/fig4.sh (batch, seq_len, speedup_preserve_vs_serial).
# Variables (gnuplot -e): dir (holding fig4-<scenario>.csv), out, term, scenarios and models
# (space-separated, in the same order).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set logscale y 2
set xrange [1 / sqrt(2) : 256 * sqrt(2)]
set yrange [1024 / sqrt(2) : 65536 * sqrt(2)]
set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256)
set ytics ("1K" 1024, "2K" 2048, "4K" 4096, "8K" 8192, "16K" 16384, "32K" 32768, "64K" 65536)
set xlabel "batch (sequences)"
set ylabel "sequence length (tokens)"
set cblabel "speedup PRESERVE vs serial (x)"
set palette rgbformulae 33,13,10
set style fill solid 1.0 noborder
set key off
label(x, fit) = (x == x) ? sprintf(fit != 0 ? "%.2f" : "%.2f*", x) : "invalid"
# The hatch spans a cell where it does not fit and nothing elsewhere (every point is plotted:
# a data set with none would warn).
span(dummy) = column("fits_hbm") == 0 ? sqrt(2) : 1
set multiplot layout 1,3 title "Fig 4: PRESERVE speedup over the serial baseline, 4 NPUs, int8\npaper: up to 1.82x at long sequences and small batches; falls with batch; drops sharply once the KV cache spills L2 (e.g. batch 4, seq 32K)\nhatched, *: the weights and KV cache exceed the HBM of a device (fits_hbm 0 in the CSV)"
do for [i = 1:words(scenarios)] {
    f = dir . "/fig4-" . word(scenarios, i) . ".csv"
    set title word(models, i)
    plot f using (column("batch")):(column("seq_len")):(column("batch") / sqrt(2)):(column("batch") * sqrt(2)):(column("seq_len") / sqrt(2)):(column("seq_len") * sqrt(2)):(column("speedup_preserve_vs_serial")) with boxxyerror fc palette, \
         f using (column("batch")):(column("seq_len")):(column("batch") / span(0)):(column("batch") * span(0)):(column("seq_len") / span(0)):(column("seq_len") * span(0)) with boxxyerror fs transparent pattern 4 noborder lc rgb "#444444", \
         f using (column("batch")):(column("seq_len")):(label(column("speedup_preserve_vs_serial"), column("fits_hbm"))) with labels font ",7"
}
unset multiplot
