# Table 1 as grouped bars: PRESERVE's speedup over the serial baseline per model at 2, 4 and 8
# NPUs (batch 4, sequence 16K, int8, Ascend 910B). Draws only; every number comes from the CSV
# written by scripts/table1.sh (scenario,model,speedup_2_npus,speedup_4_npus,speedup_8_npus).
# Variables (gnuplot -e): csv, out, term.
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set title "Table 1: PRESERVE speedup over the serial baseline (batch 4, seq 16K, int8, Ascend 910B)\npaper: 1.09x-1.61x; ~1.6x for Llama3-8B and Phi-3-small at 4 NPUs; Llama3-70B 1.36x, Phi-3-medium 1.43x; Qwen2-7B best at 2 NPUs"
set ylabel "speedup PRESERVE vs serial (x)"
set xlabel "model"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.9
set yrange [0:*]
set grid ytics
set key outside right top title "NPUs (tensor parallel)"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb "#555555"
# Bar j (0, 1, 2) of cluster i sits at i + (j - 1) / 4 with 3 bars and a gap of 1.
plot csv using (column("speedup_2_npus")):xtic(2) title "2 NPUs" lc rgb "#4C72B0", \
     '' using (column("speedup_4_npus")) title "4 NPUs" lc rgb "#DD8452", \
     '' using (column("speedup_8_npus")) title "8 NPUs" lc rgb "#55A868", \
     '' using ($0 - 0.25):(column("speedup_2_npus")):(sprintf("%.2f", column("speedup_2_npus"))) with labels offset 0,0.6 font ",8" notitle, \
     '' using ($0):(column("speedup_4_npus")):(sprintf("%.2f", column("speedup_4_npus"))) with labels offset 0,0.6 font ",8" notitle, \
     '' using ($0 + 0.25):(column("speedup_8_npus")):(sprintf("%.2f", column("speedup_8_npus"))) with labels offset 0,0.6 font ",8" notitle
