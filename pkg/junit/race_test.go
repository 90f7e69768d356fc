//go:build race

package junit

const raceEnabled = true
