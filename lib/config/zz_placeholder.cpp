// placeholder; removed when the real sources land
