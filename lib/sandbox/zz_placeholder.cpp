// placeholder until the sandbox library lands; removed then
