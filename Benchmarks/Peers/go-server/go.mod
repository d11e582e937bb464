module goserver

go 1.19
