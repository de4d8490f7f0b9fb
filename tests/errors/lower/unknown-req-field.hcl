resource x {
  body = { v = req.composit.spec }
}
