/* An empty unit so that the support library always has a source. */
typedef int ocisbx_empty_unit;
