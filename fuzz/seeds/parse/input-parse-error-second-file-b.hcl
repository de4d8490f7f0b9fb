locals {
  broken = "unterminated
}
