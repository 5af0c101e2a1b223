/** The time `kubectl remram dream now` asked for a cycle, if any (its own module: the plugin bundles only this). */
export const dreamRequestAnnotation = "remram.io/dream-requested-at";
