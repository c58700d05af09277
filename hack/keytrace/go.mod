module github.com/rangekeeper/rangekeeper/hack/keytrace

go 1.26.0

require golang.org/x/exp v0.0.0-20261120182113-8801fbdfac81
