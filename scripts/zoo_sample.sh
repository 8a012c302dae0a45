# The zoo sample the emulated-CPU test scripts run (scripts/test_arm64.sh, scripts/test_avx2_cpu.sh;
# sourced by both): every kernel family of the vector layer (Winograd and blocked convs: resnet18,
# unet_small; depthwise: mobilenet_v2, mobilenet_v3_small, efficientnet_b0; transformer:
# minilm_l6, tiny_vit; recurrent: crnn_lstm), one case each, as "model/case ...".
ZOO_SAMPLE_DEFAULT="resnet18/b1 unet_small/b1 mobilenet_v2/b1 mobilenet_v3_small/b1 efficientnet_b0/b1 minilm_l6/b1s16 tiny_vit/b1 crnn_lstm/b2t37"
