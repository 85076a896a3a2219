fn serve(gguf_tensor: &[u8], m: usize, k: usize, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mmq = mmqgen::Mmq::new(0)?; // GPU 0's primary context, the embedded mmqgen.toml
    let stream = mmq.gpu().context().new_stream()?; // or your engine's stream (a cudarc CudaStream)
    let blocks = stream.clone_htod(gguf_tensor)?; // your engine's copy of the q6_K tensor, as it loaded it
    let w = mmq.register_device(&blocks, m, k)?; // borrowed in place: nothing copied, nothing allocated
    mmq.reserve(&stream, m, 2048, k)?; // optional: calls up to n = 2048 then allocate nothing
    let x = stream.alloc_zeros::<f32>(n * k)?; // activations [n][K]
    let mut out = stream.alloc_zeros::<f32>(n * m)?; // output [n][m], overwritten
    let variant = w.matmul(&x, &mut out, n, &stream)?; // enqueued on `stream`, no host wait
    println!("{} served {n} x {m} x {k}", variant.name);
    Ok(())
}
