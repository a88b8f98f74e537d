"""The runtime side of the noise controls (DESIGN.md, Noise controls and traces): shelving and the
poll history. The per-trigger controls (`for:`, `clear_where`, flap detection) live in trigger state
(`compiler.trigger_controls`); these two need the store.

- `shelving.py`: what a shelf is, whether one covers a fire, and how fires of a shelved sensor or
  trigger are held (the sensor keeps polling and keeping state).
- `history.py`: the trace of one poll (per trigger: what it selected, the transitions it found, what
  became of each) and the outcome words the discloser later writes into it.
- `query.py`: `sensor_noise(store, name)`, what `attend sensors`, `attend sensors history` and the
  sensors tab read: a sensor's shelves, flapping keys and last poll verdicts.
- `commands.py`: `attend sensors shelve|unshelve|history`.

Storage is `runtime/store/shelves.py` (the `shelves` table and the `Shelf` row) and
`runtime/store/poll_history.py` (the `poll_history` table and the discloser's rewrite of a stored
trace, `settle_outcomes`).
"""
