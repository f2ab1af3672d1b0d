// The one get-or-create helper for the nested maps of histograms and stats.

/** The value at `key`, created with `make()` and stored first if absent. */
export function getOrCreate<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}
