//go:build race

package engine

// simRace: the race detector is on; the simulation runs a smaller size.
const simRace = true
