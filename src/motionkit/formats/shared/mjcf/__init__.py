"""The one MJCF parser (includes, compiler, defaults, frames), the general model it gives,
and the PARC subset."""
