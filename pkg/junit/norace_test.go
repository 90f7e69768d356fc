//go:build !race

package junit

const raceEnabled = false
