resource x {
  body = { v = invoke("g", {}) }
}
